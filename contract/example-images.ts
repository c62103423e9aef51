/**
 * Images for the documented examples, as data URLs small enough to print. The large ones are flat
 * grey 1-bit PNGs made here (a few kilobytes for tens of megapixels), so an example can show the
 * size limits without shipping a large file.
 */
import { deflateSync } from "node:zlib";

/** A 16x16 PNG (an orange disc on blue). */
export const EXAMPLE_IMAGE =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQAQMAAAAlPW0iAAAABlBMVEXcWihGjNy7+o3qAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAHUlEQVQI12P4/58Bgn7IM3zgZ3jAjo6AgkApmDIACYMVi1L9jIMAAAAASUVORK5CYII=";

/** Bytes that are not an image ("hello"). */
export const EXAMPLE_NOT_AN_IMAGE = "data:image/png;base64,aGVsbG8=";

/** How a result's data URL is shown in examples. */
export const EXAMPLE_RESULT_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA…";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A black 1-bit greyscale PNG of `width` x `height`, as a data URL. */
export function flatPng(width: number, height: number): string {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, greyscale, deflate, no filter method, no interlace
  const rows = Buffer.alloc((Math.ceil(width / 8) + 1) * height); // each row: filter byte 0, then zero bits
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
  return `data:image/png;base64,${png.toString("base64")}`;
}

/** 600x600: enlarged 8x it is 23 MP, over the default output limit (ATELIER_MAX_OUTPUT_PIXELS). */
export const EXAMPLE_ENLARGES_TOO_FAR = flatPng(600, 600);
/** 5000x4000 = 20 MP: within the default input limit, over the default output limit. */
export const EXAMPLE_OVER_OUTPUT_LIMIT = flatPng(5000, 4000);
/** 8000x7000 = 56 MP: over the default input limit (ATELIER_MAX_INPUT_PIXELS). */
export const EXAMPLE_OVER_INPUT_LIMIT = flatPng(8000, 7000);
