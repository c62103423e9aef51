/**
 * Turns a client-supplied `imageUrl` into image bytes without letting the client aim this server at
 * its own network.
 *
 * `data:` URLs are decoded in memory. `http:`/`https:` URLs are fetched under the outbound rule
 * (outbound-target.ts): the host is judged before any lookup, every resolved address is checked
 * against the {@link AddressPolicy} and exactly those checked addresses go to the socket, so DNS
 * cannot answer differently between the check and the connect. Redirects are followed by hand so
 * that every hop is checked the same way.
 */
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { setImmediate as nextTurn } from "node:timers/promises";
import { BASE64_SLICE_CHARS, decodeBase64, mapSlices, someSlice } from "../../core/base64-slices.js";
import type { AtelierConfig } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { AddressPolicy } from "./address-policy.js";
import { checkedLookup, hostOf, portOf, refusalBeforeLookup, type TargetRefusal } from "./outbound-target.js";

/**
 * Longest `http(s)` image URL accepted, in characters (data URLs are bounded by their decoded size
 * instead). Browsers and CDNs handle about 2 kB reliably; anything longer is not a real image link.
 */
export const MAX_IMAGE_URL_LENGTH = 2048;

/** Image bytes and what the source said they are. */
export interface FetchedImage {
  /** The encoded image exactly as received (never decompressed or transcoded). */
  bytes: Buffer;
  /** The data URL's media type or the HTTP `Content-Type` header; undefined when none was sent. */
  contentType: string | undefined;
  /** Where the bytes came from: decoded from a `data:` URL, or downloaded over HTTP(S). */
  source: "data" | "http";
}

/** Limits and the address policy for {@link fetchImage}. */
export interface FetchImageOptions {
  /** Largest accepted image in bytes: the decoded size for data URLs, the body size for HTTP. */
  maxBytes: number;
  /** Time limit for the whole HTTP fetch, every redirect hop and the body included, in milliseconds. */
  timeoutMs: number;
  /** Redirects followed at most; the next one fails the fetch. 0 follows none. */
  maxRedirects: number;
  /** Decides which addresses may be contacted. Build it once and share it between fetches. */
  addressPolicy: AddressPolicy;
}

/**
 * Builds {@link FetchImageOptions} from the service configuration, parsing the allow-list once.
 * @throws Error when `fetch.allowedPrivateHosts` holds an entry that is not a host, IP or CIDR.
 */
export function fetchImageOptionsFromConfig(
  config: Pick<AtelierConfig, "fetch" | "images">,
): FetchImageOptions {
  return {
    maxBytes: config.images.maxBytes,
    timeoutMs: config.fetch.timeoutMs,
    maxRedirects: config.fetch.maxRedirects,
    addressPolicy: new AddressPolicy(config.fetch.allowedPrivateHosts),
  };
}

/**
 * Reads the image behind `imageUrl`: a base64 `data:image/...` URL, or an `http:`/`https:` URL.
 *
 * @param signal aborts the fetch; the promise then rejects with `CANCELLED`.
 * @throws AtelierError `INVALID_IMAGE_URL` (bad URL or scheme, credentials, refused address),
 *   `IMAGE_TOO_LARGE` (over `maxBytes`), `SOURCE_FETCH_FAILED` (network error, non-2xx answer,
 *   too many redirects, timeout) or `CANCELLED`.
 */
export async function fetchImage(
  imageUrl: string,
  options: FetchImageOptions,
  signal?: AbortSignal,
  urlBytes?: Uint8Array,
): Promise<FetchedImage> {
  if (signal?.aborted) throw cancelledError();
  // `imageUrl`'s own bytes, when the caller has them (an ASCII string of the request body, see
  // RequestContext.bodyStringBytes): read instead of the string, whose first read may copy it whole.
  if (urlBytes && isTrimmedDataUrl(urlBytes)) return decodeDataUrl(bytesText(urlBytes), options.maxBytes);
  const trimmed = imageUrl.trim();
  if (/^data:/i.test(trimmed)) return decodeDataUrl(trimmed, options.maxBytes);
  if (trimmed.length > MAX_IMAGE_URL_LENGTH) {
    throw invalidUrl(`imageUrl is ${trimmed.length} characters long, over the limit of ${MAX_IMAGE_URL_LENGTH} for http(s) URLs; link the image directly or send it as a data: URL.`);
  }
  const url = parseHttpUrl(trimmed, false);
  return withDeadline(options.timeoutMs, signal, (deadline) => fetchOverHttp(url, options, deadline));
}

/**
 * Whether {@link fetchImage} takes `imageUrl`'s image from the URL itself (a `data:` URL, decoded in
 * memory) rather than over the network; `urlBytes` as for fetchImage.
 */
export function isDataUrl(imageUrl: string, urlBytes?: Uint8Array): boolean {
  return (urlBytes !== undefined && isTrimmedDataUrl(urlBytes)) || /^data:/i.test(imageUrl.trim());
}

// ---------------------------------------------------------------------------------------------
// data: URLs

const IMAGE_MEDIA_TYPE = /^image\/[a-z0-9][a-z0-9.+-]*$/;
const NOT_BASE64_ALPHABET = /[^A-Za-z0-9+/]/;
const WHITESPACE = /\s/;

/** A data URL's characters: a string, or an ASCII string's bytes read as text a slice at a time. */
interface UrlText {
  readonly length: number;
  slice(start: number, end?: number): string;
  indexOf(text: string): number;
  /** The whole text as one string (a copy, for bytes). */
  toString(): string;
}

/** ASCII bytes as {@link UrlText}. */
function bytesText(bytes: Uint8Array): UrlText {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return {
    length: buffer.length,
    slice: (start, end = buffer.length) => buffer.toString("latin1", start, Math.min(end, buffer.length)),
    indexOf: (text) => buffer.indexOf(text, 0, "latin1"),
    toString: () => buffer.toString("latin1"),
  };
}

/** Bytes that `trim()` leaves as they are and that start with `data:` in any case. */
function isTrimmedDataUrl(bytes: Uint8Array): boolean {
  const space = (byte: number | undefined) => byte === undefined || byte <= 0x20;
  return !space(bytes[0]) && !space(bytes[bytes.length - 1]) && /^data:$/i.test(Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(5, bytes.length)).toString("latin1"));
}

/**
 * Decodes a data URL's base64 payload. The checks and the decoding go a slice at a time
 * (core/base64-slices.ts): a 20 MB payload never holds the event loop for the whole of it.
 */
async function decodeDataUrl(dataUrl: UrlText | string, maxBytes: number): Promise<FetchedImage> {
  const comma = dataUrl.indexOf(",");
  if (comma < 0) {
    throw invalidUrl(
      "imageUrl is a data URL without a payload; expected data:image/<type>;base64,<payload>.",
    );
  }
  const parameters = dataUrl.slice("data:".length, comma).split(";").map((part) => part.trim());
  const mediaType = (parameters[0] ?? "").toLowerCase();
  if (!IMAGE_MEDIA_TYPE.test(mediaType)) {
    const shown = mediaType === "" ? "none" : JSON.stringify(mediaType.slice(0, 60));
    throw invalidUrl(`imageUrl data URL must carry an image media type such as image/png (got ${shown}).`);
  }
  if (parameters.length < 2 || parameters.at(-1)?.toLowerCase() !== "base64") {
    throw invalidUrl("imageUrl data URL must be base64-encoded: data:image/<type>;base64,<payload>.");
  }
  const bytes = await decodeCanonicalBase64(dataUrl, comma + 1, maxBytes);
  if (bytes) return { bytes, contentType: mediaType, source: "data" };

  // Anything else (whitespace, a character outside the alphabet, a refusal): checked in full.
  let payload = (typeof dataUrl === "string" ? dataUrl : dataUrl.toString()).slice(comma + 1);
  // Base64 in data URLs may be wrapped; whitespace carries no data (WHATWG forgiving-base64).
  if (await someSlice(payload, (slice) => WHITESPACE.test(slice))) payload = await mapSlices(payload, (slice) => slice.replace(/\s+/g, ""));
  // Judge the size by the base64 length so an oversized payload is refused before it is decoded.
  const padding = paddingOf(payload);
  const decodedBytes = Math.floor((payload.length * 3) / 4) - padding;
  if (decodedBytes > maxBytes) throw tooLargeError(maxBytes);
  if (decodedBytes <= 0) throw invalidUrl("imageUrl data URL carries no image bytes.");
  // Before its padding, the payload holds only the base64 alphabet.
  if (badBase64Length(payload.length, padding) || (await someSlice(payload.slice(0, payload.length - padding), (slice) => NOT_BASE64_ALPHABET.test(slice)))) {
    throw invalidUrl("imageUrl data URL payload is not valid base64.");
  }
  return { bytes: await decodeBase64(payload), contentType: mediaType, source: "data" };
}

const paddingOf = (payload: string) => (payload.endsWith("==") ? 2 : payload.endsWith("=") ? 1 : 0);
const badBase64Length = (length: number, padding: number) => length % 4 === 1 || (padding > 0 && length % 4 !== 0);

/**
 * The payload from `start` decoded, when it is plain base64 within `maxBytes`: only the alphabet,
 * then its padding; undefined for anything else, which the full checks then judge. The decoder
 * itself does the checking: Node skips a character outside the base64 alphabet and stops at a `=`,
 * so any such character leaves fewer bytes than the length promises, and the URL-safe `-` and `_`,
 * which it reads, are looked for (a search far cheaper than a regular expression over 20 MB).
 * Characters above U+00FF are refused first: the decoder reads only their low byte.
 */
async function decodeCanonicalBase64(text: UrlText | string, start: number, maxBytes: number): Promise<Buffer | undefined> {
  const length = text.length - start;
  const padding = paddingOf(text.slice(Math.max(start, text.length - 2)));
  const decodedBytes = Math.floor((length * 3) / 4) - padding;
  if (decodedBytes <= 0 || decodedBytes > maxBytes || badBase64Length(length, padding)) return undefined;
  const out = Buffer.allocUnsafe(Math.ceil((length * 3) / 4));
  let written = 0;
  for (let at = start; at < text.length; at += BASE64_SLICE_CHARS) {
    if (at > start) await nextTurn();
    const slice = text.slice(at, at + BASE64_SLICE_CHARS);
    if (Buffer.byteLength(slice, "utf8") !== slice.length || slice.includes("-") || slice.includes("_")) return undefined;
    written += out.write(slice, written, "base64");
  }
  return written === decodedBytes ? out.subarray(0, written) : undefined;
}

// ---------------------------------------------------------------------------------------------
// http: and https: URLs

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const REQUEST_HEADERS = {
  "User-Agent": "Atelier-ImageFetcher/1",
  Accept: "image/*",
  // Bytes are counted against maxBytes as they arrive; a compressed body would dodge that limit.
  "Accept-Encoding": "identity",
};

/** Checks scheme and credentials; `viaRedirect` words the error for a hop the source chose. */
function parseHttpUrl(text: string, viaRedirect: boolean, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch (error) {
    if (viaRedirect) {
      throw new AtelierError(
        "SOURCE_FETCH_FAILED",
        "The imageUrl source sent a redirect to an invalid URL.",
        { cause: error },
      );
    }
    throw invalidUrl("imageUrl is not a valid absolute URL; use an http:, https: or data: URL.", error);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    const scheme = JSON.stringify(url.protocol.slice(0, 30));
    throw invalidUrl(
      viaRedirect
        ? `imageUrl redirects to an unsupported scheme (${scheme}); ` +
            "only http: and https: redirects are followed."
        : `imageUrl must be an http:, https: or data: URL (got ${scheme}).`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw invalidUrl(
      viaRedirect
        ? "imageUrl redirects to a URL with credentials (user:password@), which this server does not fetch."
        : "imageUrl must not contain credentials (user:password@).",
    );
  }
  return url;
}

async function fetchOverHttp(
  first: URL,
  options: FetchImageOptions,
  signal: AbortSignal,
): Promise<FetchedImage> {
  let url = first;
  const sourcePort = portOf(first);
  for (let redirects = 0; ; redirects += 1) {
    const response = await request(url, options.addressPolicy, sourcePort, redirects > 0, signal);
    const status = response.statusCode ?? 0;

    if (REDIRECT_STATUSES.has(status)) {
      response.destroy();
      if (redirects >= options.maxRedirects) {
        throw new AtelierError(
          "SOURCE_FETCH_FAILED",
          `The imageUrl source redirected more than ${options.maxRedirects} times; link the image directly.`,
        );
      }
      const location = response.headers.location;
      if (location === undefined || location === "") {
        throw new AtelierError(
          "SOURCE_FETCH_FAILED",
          `The imageUrl source answered HTTP ${status} without a Location header.`,
        );
      }
      url = parseHttpUrl(location, true, url);
      continue;
    }

    if (status < 200 || status > 299) {
      response.destroy();
      throw new AtelierError(
        "SOURCE_FETCH_FAILED",
        `Could not fetch imageUrl: the source answered HTTP ${status}.`,
      );
    }
    const bytes = await readBody(response, options.maxBytes, signal);
    return { bytes, contentType: response.headers["content-type"], source: "http" };
  }
}

/**
 * Sends one GET and resolves with the response head; the body is left unread. `sourcePort` is the
 * port of the client's own URL, which allow-list entries without a port open (address-policy.ts).
 */
async function request(
  url: URL,
  policy: AddressPolicy,
  sourcePort: number,
  viaRedirect: boolean,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const hostname = hostOf(url);
  const refusal = refusalBeforeLookup(url, policy, sourcePort);
  if (refusal !== undefined) throw refusedTargetError(refusal, viaRedirect);
  if (signal.aborted) throw signal.reason;

  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = client.request({
      protocol: url.protocol,
      hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "GET",
      headers: REQUEST_HEADERS,
      // A fresh connection per request: a pooled socket would skip the address check.
      agent: false,
      lookup: checkedLookup(policy, portOf(url), sourcePort, (refused) => refusedTargetError(refused, viaRedirect)),
    });
    const onAbort = (): void => {
      outgoing.destroy();
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    outgoing.on("response", (response) => {
      signal.removeEventListener("abort", onAbort);
      resolve(response);
    });
    outgoing.on("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      reject(networkError(error, hostname));
    });
    outgoing.end();
  });
}

/** Collects the body, stopping (and closing the socket) as soon as it is over `maxBytes`. */
function readBody(response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const declaredLength = Number(response.headers["content-length"]);
  if (Number.isFinite(declaredLength) && declaredLength > maxBytes) {
    response.destroy();
    return Promise.reject(tooLargeError(maxBytes));
  }

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      outcome();
    };
    const onAbort = (): void => {
      response.destroy();
      settle(() => reject(signal.reason));
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });

    response.on("data", (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > maxBytes) {
        response.destroy();
        settle(() => reject(tooLargeError(maxBytes)));
        return;
      }
      chunks.push(chunk);
    });
    response.on("end", () => {
      if (response.complete) settle(() => resolve(Buffer.concat(chunks, received)));
      else settle(() => reject(truncatedError()));
    });
    response.on("error", (error) => settle(() => reject(truncatedError(error))));
    // A connection that drops mid-body may close without `end`; never leave the promise hanging.
    response.on("close", () => settle(() => reject(truncatedError())));
  });
}

/** Runs `work` under one time limit and the caller's signal; both abort with an AtelierError. */
async function withDeadline<T>(
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    const message = `Fetching imageUrl timed out after ${timeoutMs} ms.`;
    controller.abort(new AtelierError("SOURCE_FETCH_FAILED", message));
  }, timeoutMs);
  const onCancel = (): void => controller.abort(cancelledError());
  callerSignal?.addEventListener("abort", onCancel, { once: true });
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener("abort", onCancel);
  }
}

// ---------------------------------------------------------------------------------------------
// Errors: public messages name the host or address at most; the raw error travels as `cause`.

function invalidUrl(message: string, cause?: unknown): AtelierError {
  return new AtelierError("INVALID_IMAGE_URL", message, cause === undefined ? {} : { cause });
}

/** A source's own redirect to a bad host name is its fault (502); anything else the client's (400). */
function refusedTargetError(refusal: TargetRefusal, viaRedirect: boolean): AtelierError {
  if (refusal.reason === "private-address") {
    const verb = viaRedirect ? "redirects to" : "resolves to";
    const shown = refusal.hostname === undefined ? refusal.address : `${refusal.address} for ${refusal.hostname}`;
    return invalidUrl(`imageUrl ${verb} a private or reserved address (${shown}), which this server does not fetch.`);
  }
  const shown = JSON.stringify(refusal.host.length > 60 ? `${refusal.host.slice(0, 60)}…` : refusal.host);
  if (refusal.reason === "special-use-name") {
    return invalidUrl(`imageUrl ${viaRedirect ? "redirects to" : "names"} ${shown}, a local or special-use host name (localhost, .local, .internal, ...), which this server does not fetch.`);
  }
  if (viaRedirect) return new AtelierError("SOURCE_FETCH_FAILED", `The imageUrl source redirected to an invalid host name (${shown}).`);
  return invalidUrl(`imageUrl host ${shown} is not a valid host name (dot-separated labels of letters, digits and hyphens, at most 63 characters each and 253 in all) or IP address.`);
}

function tooLargeError(maxBytes: number): AtelierError {
  return new AtelierError(
    "IMAGE_TOO_LARGE",
    `The image at imageUrl is larger than the limit of ${maxBytes} bytes (${formatSize(maxBytes)}).`,
  );
}

function truncatedError(cause?: unknown): AtelierError {
  return new AtelierError(
    "SOURCE_FETCH_FAILED",
    "Could not fetch imageUrl: the source closed the connection before the image was complete.",
    cause === undefined ? {} : { cause },
  );
}

function cancelledError(): AtelierError {
  return new AtelierError("CANCELLED", "The request was cancelled before the image was fetched.");
}

function networkError(error: unknown, hostname: string): AtelierError {
  if (error instanceof AtelierError) return error;
  const reason = describeNetworkError(error);
  return new AtelierError("SOURCE_FETCH_FAILED", `Could not fetch imageUrl from ${hostname}: ${reason}.`, {
    cause: error,
  });
}

const TLS_ERROR_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/;

function describeNetworkError(error: unknown): string {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  if (code === "ECONNREFUSED") return "the connection was refused";
  if (["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL", "ENODATA"].includes(code)) {
    return "the host name could not be resolved";
  }
  if (code === "ECONNRESET" || code === "EPIPE") return "the connection was reset";
  if (["ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN"].includes(code)) {
    return "the host could not be reached";
  }
  // OpenSSL failures surface as EPROTO (e.g. TLS spoken to a plain-HTTP port) or certificate codes.
  if (code === "EPROTO" || TLS_ERROR_CODE.test(code)) {
    return "the TLS connection could not be established";
  }
  if (code.startsWith("HPE_")) return "the source sent a malformed HTTP response";
  return "a network error occurred";
}

/** `26214400` → `25 MiB`, `1536` → `1.5 KiB`: the byte count stays in the message too. */
function formatSize(bytes: number): string {
  const KiB = 1024;
  const MiB = 1024 * KiB;
  if (bytes >= MiB) return `${Number((bytes / MiB).toFixed(2))} MiB`;
  if (bytes >= KiB) return `${Number((bytes / KiB).toFixed(2))} KiB`;
  return `${bytes} B`;
}
