/**
 * The image formats Atelier decodes, as one fact: the decoder checks it, error messages and the
 * OpenAPI text name it. Raster formats only: SVG (and PDF, and anything else libvips could load) is
 * refused, because rendering a vector document costs what its author wants it to (a 2.4 kB SVG of
 * nested `<use>` took 6 s of CPU) and no image operation here needs vector input.
 */
export interface ImageFormat {
  /** As messages show it. */
  name: string;
  /** `format` as sharp's metadata reports it. */
  sharpFormat: string;
  /** Its media type, as a data URL of it names it. */
  mimeType: string;
  /** True when the first bytes of a file are this format's signature. */
  matches: (bytes: Uint8Array) => boolean;
}

const ascii = (bytes: Uint8Array, start: number, end: number) => Buffer.from(bytes.subarray(start, end)).toString("latin1");
const startsWith = (bytes: Uint8Array, signature: number[]) => signature.every((byte, index) => bytes[index] === byte);

/** An ISO-BMFF `ftyp` box naming an AVIF brand (major or compatible). */
function isAvif(bytes: Uint8Array): boolean {
  if (bytes.length < 16 || ascii(bytes, 4, 8) !== "ftyp") return false;
  const boxSize = Math.min(bytes.length, Buffer.from(bytes.subarray(0, 4)).readUInt32BE(0));
  const brands = [ascii(bytes, 8, 12)];
  for (let offset = 16; offset + 4 <= boxSize; offset += 4) brands.push(ascii(bytes, offset, offset + 4));
  return brands.some((brand) => brand === "avif" || brand === "avis");
}

export const ACCEPTED_IMAGE_FORMATS: readonly ImageFormat[] = [
  { name: "PNG", sharpFormat: "png", mimeType: "image/png", matches: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { name: "JPEG", sharpFormat: "jpeg", mimeType: "image/jpeg", matches: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { name: "WebP", sharpFormat: "webp", mimeType: "image/webp", matches: (b) => b.length >= 12 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP" },
  { name: "GIF", sharpFormat: "gif", mimeType: "image/gif", matches: (b) => ["GIF87a", "GIF89a"].includes(ascii(b, 0, 6)) },
  // Classic and BigTIFF, either byte order.
  { name: "TIFF", sharpFormat: "tiff", mimeType: "image/tiff", matches: (b) => [[0x49, 0x49, 0x2a, 0], [0x4d, 0x4d, 0, 0x2a], [0x49, 0x49, 0x2b, 0], [0x4d, 0x4d, 0, 0x2b]].some((s) => startsWith(b, s)) },
  // libvips reads AVIF through its HEIF loader; only the AV1 brands are accepted.
  { name: "AVIF", sharpFormat: "heif", mimeType: "image/avif", matches: isAvif },
];

/** "PNG, JPEG, WebP, GIF, TIFF or AVIF", for messages and API descriptions. */
export const ACCEPTED_IMAGE_FORMAT_NAMES = `${ACCEPTED_IMAGE_FORMATS.slice(0, -1).map((format) => format.name).join(", ")} or ${ACCEPTED_IMAGE_FORMATS.at(-1)!.name}`;

/** The accepted format whose signature `bytes` start with, or undefined (SVG, PDF, text, unknown). */
export function acceptedFormatOf(bytes: Uint8Array): ImageFormat | undefined {
  return ACCEPTED_IMAGE_FORMATS.find((format) => format.matches(bytes));
}
