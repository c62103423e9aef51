/**
 * Raw image responses: `Accept: image/png|image/jpeg|image/webp` on an image operation answers the
 * image's bytes instead of JSON with a base64 data URL (a third smaller, no JSON parse), with the
 * rest of the body in `X-Atelier-*` headers. Content negotiation follows RFC 9110 q-values; JSON
 * stays the answer whenever the client does not prefer an image.
 */
import { decodeBase64 } from "../core/base64-slices.js";
import { AtelierError } from "../core/errors.js";
import type { ImageBytes } from "../core/image-bytes.js";
import { OUTPUT_FORMATS, type OutputFormatName } from "../contract/field-schemas.js";
import type { ImageSource } from "./json-pieces.js";

export const MEDIA_TYPES: Record<OutputFormatName, string> = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" };

interface MediaRange {
  type: string;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  return header.split(",").flatMap((part) => {
    const [type = "", ...params] = part.split(";").map((piece) => piece.trim().toLowerCase());
    if (!type) return [];
    const qParam = params.find((param) => param.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    return Number.isFinite(q) ? [{ type, q }] : [];
  });
}

function qualityOf(ranges: MediaRange[], mediaType: string): number {
  const [major] = mediaType.split("/");
  const exact = ranges.find((range) => range.type === mediaType);
  if (exact) return exact.q;
  const family = ranges.find((range) => range.type === `${major}/*`);
  if (family) return family.q;
  return ranges.find((range) => range.type === "*/*")?.q ?? 0;
}

/**
 * The image format to answer raw, or undefined for JSON. `requested` is the body's `outputFormat`
 * when given; an Accept that prefers images but not that one is a 406.
 */
export function negotiateRawFormat(accept: string | undefined, requested: OutputFormatName | undefined): OutputFormatName | undefined {
  if (!accept) return undefined;
  const ranges = parseAccept(accept);
  const explicitImage = ranges.some((range) => range.type.startsWith("image/") && range.q > 0);
  if (!explicitImage) return undefined;
  const json = qualityOf(ranges, "application/json");
  const candidates = (requested ? [requested] : OUTPUT_FORMATS)
    .map((format) => ({ format, q: qualityOf(ranges, MEDIA_TYPES[format]) }))
    .filter((candidate) => candidate.q > 0)
    .sort((a, b) => b.q - a.q);
  const best = candidates[0];
  if (best && best.q > json) return best.format;
  if (!best && json === 0) {
    throw new AtelierError(
      "NOT_ACCEPTABLE",
      requested
        ? `outputFormat ${requested} is answered as ${MEDIA_TYPES[requested]} or JSON, which Accept does not allow; drop outputFormat or accept ${MEDIA_TYPES[requested]}.`
        : `This operation answers ${Object.values(MEDIA_TYPES).join(", ")} or application/json; Accept allows none of them.`,
    );
  }
  return undefined;
}

/** An image operation's answer as the image itself: its bytes, and the rest of the body as headers. */
export interface ImageAnswer {
  /** The image: bytes in memory, or a reader of its stored blob. */
  image: ImageSource;
  headers: Record<string, string>;
}

function headerName(field: string): string {
  return `X-Atelier-${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`).replace(/^./, (first) => first.toUpperCase())}`;
}

/** The headers a raw answer may carry for a result whose body has `fields`: the image's size and every other field. */
export function rawImageHeaderNames(fields: readonly string[]): string[] {
  return ["X-Atelier-Width", "X-Atelier-Height", ...fields.filter((field) => field !== "data").map(headerName)];
}

/** Where a base64 `data:` URL's payload starts and its media type, read by position (a regular expression would copy the payload); null for any other URL. */
function dataUrlParts(url: string): { payloadAt: number; mediaType: string } | null {
  const marker = ";base64,";
  const payloadAt = url.startsWith("data:") ? url.indexOf(marker) + marker.length : -1;
  const mediaType = payloadAt > marker.length ? url.slice("data:".length, payloadAt - marker.length) : "";
  return mediaType === "" || /[;,]/.test(mediaType) ? null : { payloadAt, mediaType };
}

/** The bytes and media type of a base64 `data:` URL (as image results carry them, decoded a slice at a time), or null for any other URL. */
export async function dataUrlBytes(url: string): Promise<{ bytes: Buffer; mediaType: string } | null> {
  const parts = dataUrlParts(url);
  return parts ? { bytes: await decodeBase64(url, parts.payloadAt), mediaType: parts.mediaType } : null;
}

export type { ImageBytes };

/** The image `url` stands for in `kept`, else the bytes of a data URL; null for any other URL. */
async function imageAt(url: string, kept: ReadonlyMap<string, ImageSource>): Promise<ImageSource | null> {
  const image = kept.get(url);
  if (image) return image;
  const decoded = await dataUrlBytes(url);
  return decoded && { bytes: decoded.bytes, mimeType: decoded.mediaType };
}

/**
 * The first image of an image operation's body, the other fields as headers. `kept` holds the images
 * whose `url` is a stand-in for them (a synchronous call's bytes, RequestContext.keepImage, or a
 * job's stored result): those are the answer; any other `url` is a data URL, decoded a slice at a time.
 */
export async function rawImageOf(body: unknown, kept: ReadonlyMap<string, ImageSource> = new Map()): Promise<ImageAnswer> {
  const { data, ...rest } = body as { data?: Array<{ url: string; mimeType: string; width: number; height: number }> } & Record<string, unknown>;
  const first = data?.[0];
  const image = first && (await imageAt(first.url, kept));
  if (!first || !image) throw new AtelierError("INTERNAL", "The result carries no image to answer raw.");
  const headers: Record<string, string> = {
    "X-Atelier-Width": String(first.width),
    "X-Atelier-Height": String(first.height),
  };
  for (const [field, value] of Object.entries(rest)) {
    if (typeof value === "string" || typeof value === "number") headers[headerName(field)] = encodeURIComponent(String(value)).replace(/%20/g, " ");
    else if (Array.isArray(value)) headers[headerName(field)] = value.map((item) => encodeURIComponent(String(item)).replace(/%20/g, " ")).join(", ");
  }
  return { image, headers };
}
