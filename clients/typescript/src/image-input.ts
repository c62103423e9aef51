/**
 * Whatever the caller has (a path, bytes, a Blob, a URL or a data URL) as a request carries it:
 * remote URLs, data URLs and previous results as the URL the JSON body takes ({@link toImagePart});
 * local content as a file for a multipart form, or inline as a data URL ({@link toImageUrl}).
 */
import { toBase64 } from "./base64.js";
import { files } from "./platform.js";

/** A file path (Node), an `http(s):` or `data:` URL (string or URL), a `file:` URL, bytes or a Blob. */
export type ImageInput = string | URL | Uint8Array | ArrayBuffer | Blob | { url: string };

const SIGNATURES: Array<[string, number[], number?]> = [
  ["image/png", [0x89, 0x50, 0x4e, 0x47]],
  ["image/jpeg", [0xff, 0xd8, 0xff]],
  ["image/gif", [0x47, 0x49, 0x46, 0x38]],
  ["image/webp", [0x57, 0x45, 0x42, 0x50], 8],
  ["image/bmp", [0x42, 0x4d]],
  ["image/tiff", [0x49, 0x49, 0x2a, 0x00]],
  ["image/tiff", [0x4d, 0x4d, 0x00, 0x2a]],
  ["image/avif", [0x66, 0x74, 0x79, 0x70, 0x61, 0x76, 0x69, 0x66], 4],
];

/** The media type from the first bytes; the server decodes by content, so an unknown kind is sent as PNG and refused there if it is no image. */
export function sniffImageType(bytes: Uint8Array): string {
  for (const [type, signature, offset = 0] of SIGNATURES) {
    if (signature.every((byte, index) => bytes[offset + index] === byte)) return type;
  }
  return "image/png";
}

export function bytesToDataURL(bytes: Uint8Array, type = sniffImageType(bytes)): string {
  return `data:${type.startsWith("image/") ? type : sniffImageType(bytes)};base64,${toBase64(bytes)}`;
}

const isRemote = (text: string) => /^(https?:|data:)/i.test(text);

export async function toImageUrl(input: ImageInput): Promise<string> {
  if (typeof input === "string") {
    if (isRemote(input)) return input;
    if (/^file:/i.test(input)) return toImageUrl(new URL(input));
    return bytesToDataURL(await files(`Reading ${input}`).readFile(input));
  }
  if (input instanceof URL) {
    if (input.protocol === "file:") {
      const access = files(`Reading ${input.href}`);
      return bytesToDataURL(await access.readFile(access.pathOfFileURL(input)));
    }
    return input.href;
  }
  if (input instanceof Uint8Array) return bytesToDataURL(input);
  if (input instanceof ArrayBuffer) return bytesToDataURL(new Uint8Array(input));
  if (typeof Blob !== "undefined" && input instanceof Blob) {
    const bytes = new Uint8Array(await input.arrayBuffer());
    return bytesToDataURL(bytes, input.type || sniffImageType(bytes));
  }
  if (typeof input === "object" && input !== null && typeof (input as { url?: unknown }).url === "string") return (input as { url: string }).url;
  throw new TypeError("An image must be a path, a URL, a data URL, a Uint8Array/Buffer, an ArrayBuffer, a Blob or a previous result image.");
}

/** An image as a request carries it: a URL for the JSON body, or local content as a file part of a multipart form. */
export type ImagePart = { url: string } | { file: Blob; filename: string };

/** The last segment of a path, for a file part's name (without Node's `path`, for browsers). */
const baseName = (filePath: string) => filePath.split(/[\\/]/).pop() || "image";

const bytesPart = (bytes: Uint8Array, filename: string, type = sniffImageType(bytes)): ImagePart => ({ file: new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), filename });

/** {@link ImageInput} as a {@link ImagePart}: the same split as {@link toImageUrl}, without making local content a data URL. */
export async function toImagePart(input: ImageInput): Promise<ImagePart> {
  if (typeof input === "string") {
    if (isRemote(input)) return { url: input };
    if (/^file:/i.test(input)) return toImagePart(new URL(input));
    return bytesPart(await files(`Reading ${input}`).readFile(input), baseName(input));
  }
  if (input instanceof URL) {
    if (input.protocol !== "file:") return { url: input.href };
    const access = files(`Reading ${input.href}`);
    const filePath = access.pathOfFileURL(input);
    return bytesPart(await access.readFile(filePath), baseName(filePath));
  }
  if (input instanceof Uint8Array) return bytesPart(input, "image");
  if (input instanceof ArrayBuffer) return bytesPart(new Uint8Array(input), "image");
  if (typeof Blob !== "undefined" && input instanceof Blob) return { file: input, filename: (input as { name?: string }).name || "image" };
  return { url: await toImageUrl(input) };
}
