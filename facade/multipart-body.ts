/**
 * Reads the `multipart/form-data` bodies of the operations that take an image (their forms:
 * upload-forms.ts) into the body their JSON form carries, with busboy as the streaming parser: each
 * image file becomes the data URL a JSON client would send (uploaded-image.ts), kept with its bytes
 * (body-strings.ts), and each text field the JSON value it stands for. What comes after (the
 * procedure's schema, jobs, idempotency) sees the JSON request exactly. The limits are the JSON
 * reader's (json-body.ts), applied before their cost is paid:
 * - a declared length over ATELIER_MAX_BODY_BYTES is refused unread (413), and reading stops at the
 *   limit for bodies that do not declare one; an image file stops at ATELIER_MAX_IMAGE_BYTES (413);
 * - bodies over LARGE_BODY_BYTES take one of the places shared with JSON bodies (503 beyond them);
 * - only the parts the form takes, each once, and text fields of at most {@link MAX_FIELD_BYTES}:
 *   else 400 naming what the form takes; a body that is no readable form is 400 MALFORMED_MULTIPART.
 * Refusals are answered at once and the rest of the upload is thrown away unparsed
 * (refuse-unread-body.ts). Authentication and the quota check come before any of this, from the
 * headers alone (early-authentication.ts), exactly as for JSON.
 */
import busboy from "busboy";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { parse as parseContentType } from "content-type";
import { AtelierError, asAtelierError } from "../core/errors.js";
import { keepBodyStrings, type BodyString } from "./body-strings.js";
import { sendOwedContinue } from "./expect-continue.js";
import type { JsonBodyLimits, SendFailure } from "./json-body.js";
import { LARGE_BODY_BYTES, type LargeBodies } from "./large-bodies.js";
import { refuseUnreadBody } from "./refuse-unread-body.js";
import { UploadedImage } from "./uploaded-image.js";
import { formText, type UploadForm } from "./upload-forms.js";

/**
 * Longest text field in bytes. The text fields of the image operations are a few thousand
 * characters at most (their schemas say exactly how many); anything longer is a mistake, such as a
 * data URL sent as text.
 */
export const MAX_FIELD_BYTES = 16 * 1024;
/** Longest part name, and most headers of one part (Content-Disposition, Content-Type and a few more). */
const MAX_NAME_BYTES = 100;
const MAX_PART_HEADERS = 16;

export interface MultipartLimits extends JsonBodyLimits {
  /** Largest image file in bytes (ATELIER_MAX_IMAGE_BYTES), the same as a data URL's decoded image. */
  maxImageBytes: number;
}

/** The media type's essence when the request declares one that parses. */
function mediaTypeOf(header: string): string | undefined {
  try {
    return parseContentType(header).type;
  } catch {
    return undefined;
  }
}

/** The request's path without its query and trailing slashes. */
const pathOf = (req: Request) => req.originalUrl.split("?")[0]!.replace(/\/+$/, "");

/** Reads a JSON value out of a field's text; the text itself where it spells none. */
function jsonValueOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const malformed = (message: string) => new AtelierError("MALFORMED_MULTIPART", message);

/** A part's name as messages show it; busboy hands over parts whose Content-Disposition names none. */
const partLabel = (name: string | undefined) => (typeof name === "string" ? JSON.stringify(name.slice(0, MAX_NAME_BYTES)) : "without a name");

/**
 * The reader for the forms of `forms` (by full path, `/api/v1/tools/upscale`); `sendFailure` writes
 * refusals. Requests to other paths, and bodies that are not multipart forms, go to `otherBodies`
 * (the JSON reader), except that an image operation's body of a third media type is refused here
 * with a message naming both.
 */
export function multipartBodies(limits: MultipartLimits, forms: ReadonlyMap<string, UploadForm>, largeBodies: LargeBodies) {
  return (sendFailure: SendFailure, otherBodies: RequestHandler): RequestHandler =>
    (req: Request, res: Response, next: NextFunction): void => {
      const form = req.method === "POST" ? forms.get(pathOf(req)) : undefined;
      const header = req.headers["content-type"];
      const type = form && header !== undefined ? mediaTypeOf(header) : undefined;
      if (!form || type === undefined || type === "application/json") return void otherBodies(req, res, next);
      const refuseUnread = (error: AtelierError) => refuseUnreadBody(req, res, () => sendFailure(req, res, error));
      if (type !== "multipart/form-data") {
        return refuseUnread(
          new AtelierError(
            "UNSUPPORTED_MEDIA_TYPE",
            `Send the request body as JSON in UTF-8 with \`Content-Type: application/json\`, or as a multipart/form-data form with the image in its \`image\` file part; received Content-Type ${type}.`,
          ),
        );
      }
      readForm(req, res, next, form, limits, largeBodies, sendFailure);
    };
}

function readForm(
  req: Request,
  res: Response,
  next: NextFunction,
  form: UploadForm,
  limits: MultipartLimits,
  largeBodies: LargeBodies,
  sendFailure: SendFailure,
): void {
  // Refused before the body has been read: answered now, the rest of the upload thrown away unparsed.
  const refuseUnread = (error: AtelierError) => refuseUnreadBody(req, res, () => sendFailure(req, res, error));
  const refuseRead = (error: AtelierError) => sendFailure(req, res, error);
  const encoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding !== "identity") return refuseUnread(new AtelierError("UNSUPPORTED_MEDIA_TYPE", `Send the form without Content-Encoding (received ${encoding.slice(0, 40)}).`));
  const declared = req.headers["content-length"] === undefined ? undefined : Number(req.headers["content-length"]);
  const tooLarge = () => new AtelierError("PAYLOAD_TOO_LARGE", `The request body is over this server's limit of ${limits.maxBodyBytes} bytes (ATELIER_MAX_BODY_BYTES).`);
  if (declared !== undefined && declared > limits.maxBodyBytes) return refuseUnread(tooLarge());
  let giveBackLargeSlot: (() => void) | undefined;
  const takeLargeSlot = (): boolean => (giveBackLargeSlot ??= largeBodies.take()) !== undefined;
  if (declared !== undefined && declared > LARGE_BODY_BYTES && !takeLargeSlot()) return refuseUnread(largeBodies.busy());

  const takes = formText(form);
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: "utf8",
      limits: {
        // busboy reports a limit when a part reaches it: one byte more, so a part of exactly the limit passes.
        fileSize: limits.maxImageBytes + 1,
        fieldSize: MAX_FIELD_BYTES + 1,
        fieldNameSize: MAX_NAME_BYTES,
        headerPairs: MAX_PART_HEADERS,
        // One more than the form has: a further part is refused by name below (a repeat or an unknown one).
        parts: form.files.size + form.fields.size + 1,
      },
    });
  } catch {
    giveBackLargeSlot?.();
    return refuseUnread(malformed("The multipart/form-data Content-Type has no boundary parameter; let the HTTP client set the header for the form it sends."));
  }

  const body: Record<string, unknown> = {};
  const seen = new Set<string>();
  const images = new Map<string, UploadedImage>();
  let received = 0;
  let done = false;
  const finish = (outcome: () => void) => {
    if (done) return;
    done = true;
    giveBackLargeSlot?.();
    req.off("data", onData);
    req.off("end", onEnd);
    parser.removeAllListeners();
    // Listened to again so a late parser error (the body it was fed, cut off) is not thrown.
    parser.on("error", () => {});
    // A refusal can come from inside one of the parser's own callbacks (a part's event), which goes
    // on using its state once the callback returns: it is destroyed after that, never under it.
    setImmediate(() => parser.destroy());
    outcome();
  };
  const refuse = (error: AtelierError) =>
    finish(() => {
      images.clear();
      refuseUnread(error);
    });
  // Whatever a handler throws is a refusal: busboy calls them from inside its parser.
  const guarded =
    <Args extends unknown[]>(handler: (...args: Args) => void) =>
    (...args: Args): void => {
      try {
        handler(...args);
      } catch (error) {
        refuse(asAtelierError(error));
      }
    };
  const once = (name: string): boolean => {
    if (!seen.has(name)) {
      seen.add(name);
      return true;
    }
    refuse(malformed(`The part ${JSON.stringify(name)} is sent twice. This operation takes ${takes}, each once.`));
    return false;
  };

  const onFile = (name: string | undefined, stream: NodeJS.ReadableStream) => {
    // An error of a file's stream (the parser destroyed, the body cut off) is the parser's too:
    // reported once, there, whether or not the part is taken.
    stream.on("error", () => {});
    const field = name === undefined ? undefined : form.files.get(name);
    if (name === undefined || field === undefined) {
      const hint = name !== undefined && form.fields.has(name) ? `${JSON.stringify(name)} is a text field here. ` : "";
      return refuse(malformed(`Unexpected file part ${partLabel(name)}. ${hint}This operation takes ${takes}.`));
    }
    if (!once(name)) return;
    const image = new UploadedImage(name, declared === undefined ? undefined : Math.min(declared, limits.maxImageBytes));
    images.set(field, image);
    stream.on(
      "data",
      guarded((chunk: Buffer) => {
        if (!done) image.write(chunk);
      }),
    );
    stream.on("limit", () => refuse(new AtelierError("IMAGE_TOO_LARGE", `The file in part ${JSON.stringify(name)} is larger than the limit of ${limits.maxImageBytes} bytes (ATELIER_MAX_IMAGE_BYTES).`)));
  };

  const onField = (name: string | undefined, value: string, info: busboy.FieldInfo) => {
    const reading = name === undefined ? undefined : form.fields.get(name);
    if (name === undefined || reading === undefined) {
      const hint = name !== undefined && form.files.has(name) ? `${JSON.stringify(name)} is a file part: send the file itself (with curl, -F ${name}=@photo.png). ` : "";
      return refuse(malformed(`Unexpected field ${partLabel(name)}. ${hint}This operation takes ${takes}.`));
    }
    if (!once(name)) return;
    if (info.valueTruncated) {
      const message = `Expected ${name} of at most ${MAX_FIELD_BYTES} bytes in a form field; images go in file parts.`;
      return refuse(new AtelierError("INVALID_INPUT", `Invalid request: ${message}`, { issues: [{ path: name, message }] }));
    }
    body[name] = reading === "json" ? jsonValueOf(value) : value;
  };

  parser.on("file", guarded(onFile));
  parser.on("field", guarded(onField));
  parser.on("partsLimit", () => refuse(malformed(`The form has more parts than this operation takes: ${takes}, each once.`)));
  parser.on("error", (error: unknown) => refuse(malformed(`The multipart/form-data body cannot be read: ${(error as Error).message}.`)));
  parser.on("close", () =>
    finish(() => {
      const missing = form.requiredFiles.find((part) => !seen.has(part));
      if (missing !== undefined) {
        const message = `Expected the image as a file part named ${JSON.stringify(missing)} (with curl, -F ${missing}=@photo.png); this operation takes ${takes}.`;
        return refuseRead(new AtelierError("INVALID_INPUT", `Invalid request: ${message}`, { issues: [{ path: missing, message }] }));
      }
      const urls: BodyString[] = [];
      try {
        for (const [field, image] of images) {
          const url = image.finish();
          body[field] = url.text;
          urls.push(url);
        }
      } catch (error) {
        return refuseRead(asAtelierError(error));
      }
      keepBodyStrings(res, urls);
      req.body = body;
      next();
    }),
  );

  const onData = guarded((chunk: Buffer) => {
    received += chunk.length;
    if (received > limits.maxBodyBytes) return refuse(tooLarge());
    if (received > LARGE_BODY_BYTES && !takeLargeSlot()) return refuse(largeBodies.busy());
    parser.write(chunk);
  });
  const onEnd = () => parser.end();
  sendOwedContinue(req, res);
  req.on("data", onData);
  req.once("end", onEnd);
  // A client that goes away mid-upload frees its place; nothing is answered.
  req.once("close", () => {
    if (!req.complete) finish(() => {});
  });
}
