/**
 * Reads and parses request bodies for REST and tRPC alike, with every limit applied before the
 * cost is paid:
 * - the media type must mean JSON in UTF-8 (any case, `charset=utf-8`/`utf8` or none): else 415;
 * - a declared length over the body limit is refused (413) before a byte is read, and reading stops
 *   at the limit for bodies that do not declare one;
 * - large bodies (over LARGE_BODY_BYTES) are read a few at a time (large-bodies.ts): beyond
 *   `maxConcurrentLargeBodies` the next one is refused with 503 and Retry-After, unread;
 * - nesting deeper than {@link MAX_JSON_DEPTH} is refused (400) before JSON.parse builds it;
 * - text that is not UTF-8 or not JSON is 400 MALFORMED_JSON.
 * Bodies are scanned as their chunks arrive (facade/json-body-scanner.ts): nesting is known at the
 * end without a pass over the text, and long plain strings (data URLs) are cut out of the text
 * JSON.parse sees and put back, so a 20 MB body is not parsed in one block on the event loop.
 * Early refusals are answered at once; the rest of the upload is thrown away unparsed, and the
 * connection closes once it has been received (facade/refuse-unread-body.ts).
 */
import type { NextFunction, Request, Response } from "express";
import { parse as parseContentType, type ContentType } from "content-type";
import { AtelierError } from "../core/errors.js";
import { isUtf8Around, JsonBodyScanner, longStringTexts, parseScannedJson } from "./json-body-scanner.js";
import { sendOwedContinue } from "./expect-continue.js";
import { refuseUnreadBody } from "./refuse-unread-body.js";
import { keepBodyStrings } from "./body-strings.js";
import { LARGE_BODY_BYTES, LargeBodies } from "./large-bodies.js";

/** Writes a refusal in the transport's error shape (REST or tRPC). */
export type SendFailure = (req: Request, res: Response, error: AtelierError) => void;

/** Deepest nesting of arrays and objects accepted; request bodies here are at most a few levels deep. */
export const MAX_JSON_DEPTH = 32;
/** Strings at least this long (in bytes) are kept out of JSON.parse's text (see parseScannedJson). */
export const LONG_STRING_BYTES = 64 * 1024;
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface JsonBodyLimits {
  /** Largest body in bytes (ATELIER_MAX_BODY_BYTES). */
  maxBodyBytes: number;
  /** Large bodies read at once (ATELIER_MAX_CONCURRENT_LARGE_BODIES). */
  maxConcurrentLargeBodies: number;
}

const MEDIA_TYPE_MESSAGE = "Send the request body as JSON in UTF-8 with `Content-Type: application/json` (a `charset` parameter, if any, must be utf-8)";

/** The 415 for a body whose media type is not JSON in UTF-8; undefined when it is. */
function mediaTypeProblem(req: Request): AtelierError | undefined {
  const header = req.headers["content-type"];
  const refuse = (detail: string) => new AtelierError("UNSUPPORTED_MEDIA_TYPE", `${MEDIA_TYPE_MESSAGE}; received ${detail}.`);
  if (header === undefined || header.trim() === "") return refuse("no Content-Type");
  let parsed: ContentType;
  try {
    parsed = parseContentType(header);
  } catch {
    return refuse(`the malformed Content-Type ${JSON.stringify(header.slice(0, 100))}`);
  }
  if (parsed.type !== "application/json") return refuse(`Content-Type ${parsed.type}`);
  const charset = parsed.parameters.charset?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") return refuse(`charset=${charset.slice(0, 40)}`);
  const encoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding !== "identity") return new AtelierError("UNSUPPORTED_MEDIA_TYPE", `${MEDIA_TYPE_MESSAGE}, without Content-Encoding (received ${encoding.slice(0, 40)}).`);
  return undefined;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const malformed = () => new AtelierError("MALFORMED_JSON", "The request body is not valid JSON.");
const tooDeep = () => new AtelierError("INVALID_INPUT", `Invalid request: the body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`);

/**
 * The body reader; `sendFailure` writes refusals. One reader (and one count of large bodies, which
 * other readers may share) can serve several mounts, each with its own `sendFailure`.
 */
export function jsonBodies(limits: JsonBodyLimits, largeBodies = new LargeBodies(limits.maxConcurrentLargeBodies)) {
  return (sendFailure: SendFailure) => (req: Request, res: Response, next: NextFunction): void => {
    const sendError = (_res: Response, error: AtelierError) => sendFailure(req, res, error);
    // Answers `error` now; the rest of the upload is thrown away unparsed (refuse-unread-body.ts).
    const refuseUnread = (_res: Response, error: AtelierError) => refuseUnreadBody(req, res, () => sendFailure(req, res, error));
    if (req.method === "GET" || req.method === "HEAD" || req.method === "OPTIONS") return next();
    const declared = req.headers["content-length"] === undefined ? undefined : Number(req.headers["content-length"]);
    const chunked = req.headers["transfer-encoding"] !== undefined;
    if (!chunked && (declared === undefined || declared === 0)) return next();
    const problem = mediaTypeProblem(req);
    if (problem) return refuseUnread(res, problem);
    const tooLarge = () => new AtelierError("PAYLOAD_TOO_LARGE", `The request body is over this server's limit of ${limits.maxBodyBytes} bytes (ATELIER_MAX_BODY_BYTES).`);
    if (declared !== undefined && declared > limits.maxBodyBytes) return refuseUnread(res, tooLarge());

    let giveBackLargeSlot: (() => void) | undefined;
    const takeLargeSlot = (): boolean => (giveBackLargeSlot ??= largeBodies.take()) !== undefined;
    const busy = () => largeBodies.busy();
    if (declared !== undefined && declared > LARGE_BODY_BYTES && !takeLargeSlot()) return refuseUnread(res, busy());

    // A declared length is the body's length (node's HTTP parser holds the client to it): the
    // chunks are copied into place as they arrive, so no copy of the whole body is made at the end
    // (on the test machines most of such a copy's cost is the first touch of fresh memory).
    let whole = declared !== undefined && !chunked && Number.isSafeInteger(declared) ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    const scanner = new JsonBodyScanner(LONG_STRING_BYTES);
    let received = 0;
    let done = false;
    const finish = (outcome: () => void) => {
      if (done) return;
      done = true;
      giveBackLargeSlot?.();
      req.off("data", onData);
      outcome();
    };
    // Refused while reading: what was read is let go at once, not held while the rest is thrown away.
    const refuseRead = (error: AtelierError) =>
      finish(() => {
        whole = undefined;
        chunks.length = 0;
        refuseUnread(res, error);
      });
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.maxBodyBytes) return refuseRead(tooLarge());
      if (received > LARGE_BODY_BYTES && !takeLargeSlot()) return refuseRead(busy());
      if (whole && received <= whole.length) chunk.copy(whole, received - chunk.length);
      else {
        // More than declared (the parser should not let it happen): gathered as undeclared bodies are.
        if (whole) chunks.push(whole.subarray(0, received - chunk.length));
        whole = undefined;
        chunks.push(chunk);
      }
      scanner.scan(chunk);
    };
    sendOwedContinue(req, res);
    req.on("data", onData);
    req.once("error", () => finish(() => {}));
    // A client that goes away mid-upload frees its slot.
    req.once("close", () => finish(() => {}));
    req.once("end", () =>
      finish(() => {
        const body = whole ? whole.subarray(0, received) : Buffer.concat(chunks, received);
        const spans = scanner.longStrings;
        if (!isUtf8Around(body, spans)) return sendError(res, new AtelierError("MALFORMED_JSON", "The request body is not valid UTF-8."));
        if (spans.length === 0) {
          const text = utf8.decode(body);
          if (text.trim() === "") return next();
          if (scanner.maxDepth > MAX_JSON_DEPTH) return sendError(res, tooDeep());
          try {
            req.body = JSON.parse(text) as unknown;
          } catch {
            return sendError(res, malformed());
          }
          return next();
        }
        if (scanner.maxDepth > MAX_JSON_DEPTH) return sendError(res, tooDeep());
        void longStringTexts(body, spans).then((texts) => {
          try {
            // The decoder drops a leading byte order mark; so does this.
            req.body = parseScannedJson(body, body.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0, spans, texts);
          } catch {
            return sendError(res, malformed());
          }
          keepBodyStrings(res, spans.flatMap((span, index) => (span.ascii ? [{ text: texts[index]!, bytes: body.subarray(span.start, span.end) }] : [])));
          next();
        });
      }),
    );
  };
}
