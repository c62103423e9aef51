/**
 * PNG encoding of raw pixels, compressed in parallel bands of rows on libuv's thread pool.
 *
 * libvips (through sharp) encodes a PNG on one thread, and after an upscale that thread is the only
 * work left: at 12 MP it took about 0.7 s while the other core idled. Here the rows are cut into bands;
 * each band is filtered on this thread (a few milliseconds, a yield between bands keeps the event loop
 * turning) and deflated on a pool thread, and the bands' deflate streams are joined into the one zlib
 * stream PNG wants, as pigz does: every band but the last ends with a sync flush (an empty stored
 * block, byte-aligned, not final) and starts with no history, so the concatenation is a valid stream.
 *
 * Every row takes the Average filter (PNG filter 3) and deflate codes it with Huffman codes alone
 * (Z_HUFFMAN_ONLY): after that filter, LSDIR outputs of 1 and 12 MP came out 52.3 % and 36.0 % of the
 * raw size against libvips' 51.9 % and 39.9 % (level 2, adaptive filters), at 24 and 269 ms of deflate
 * CPU (run-length matching, Z_RLE: 51.8 % and 36.2 % at 38 and 342 ms; libvips' whole encode: 61-67
 * and 700-730 ms), and then on several cores (bench/png-encode.ts prints both encoders). The filter
 * runs four samples at a time in 32-bit words (SIMD within a register) where the rows are word-aligned,
 * else one sample at a time, and keeps the stream's Adler-32 as it goes.
 *
 * Written here rather than taken from npm: fast-png, the common JavaScript encoder, deflates the whole
 * image in one piece on the calling thread (pako), which would block the event loop for the whole
 * encode; the parallel bands are the point.
 */
import os from "node:os";
import zlib from "node:zlib";
import { AtelierError } from "../../core/errors.js";
import { assertRawImage, type RawImage } from "./raw-image.js";

/**
 * Raw bytes per band at most: filtering one takes this thread about 4 ms (2 ns a byte), then it yields,
 * so the event loop (the router's too, in one process) never waits long.
 */
const MAX_BAND_BYTES = 2 * 1024 * 1024;
/** Raw bytes per band at least: smaller bands would cost more in per-stream overhead than they save. */
const MIN_BAND_BYTES = 256 * 1024;
/** Bands for parallelism: one per core (libuv's pool has four threads by default). */
const PARALLEL_BANDS = Math.max(1, Math.min(4, os.availableParallelism()));
/** Bands filtered and not yet deflated at most: enough to keep the pool busy, few enough to bound memory. */
const BANDS_IN_FLIGHT = 2 * PARALLEL_BANDS;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** zlib header: deflate with a 32 KiB window, no preset dictionary, "fastest" level hint; a multiple of 31. */
const ZLIB_HEADER = Buffer.from([0x78, 0x01]);
const AVERAGE_FILTER = 3;
/** PNG colour type by samples per pixel: grey, grey + alpha, RGB, RGBA. */
const COLOUR_TYPES: Record<RawImage["channels"], number> = { 1: 0, 2: 4, 3: 2, 4: 6 };
const LITTLE_ENDIAN = os.endianness() === "LE";
const ADLER_BASE = 65521;
/** Words between reductions of the Adler-32 sums: after 512 (2 KB) b is still under 2^31. */
const ADLER_RUN_WORDS = 512;

/** Rows of each band, first to last. */
export function pngBands(width: number, height: number, channels: number): number[] {
  const stride = width * channels + 1;
  const total = stride * height;
  const count = Math.max(1, Math.min(height, Math.max(Math.ceil(total / MAX_BAND_BYTES), Math.min(PARALLEL_BANDS, Math.floor(total / MIN_BAND_BYTES)))));
  const rows = Math.ceil(height / count);
  const bands: number[] = [];
  for (let y = 0; y < height; y += rows) bands.push(Math.min(rows, height - y));
  return bands;
}

/** A band of filtered rows and zlib's Adler-32 of everything filtered so far, this band included. */
export interface FilteredRows {
  data: Buffer;
  adler: number;
}

/**
 * Rows `y0` to `y0 + rows` of `image`, each as its filter byte (3, Average) then its filtered samples:
 * every sample minus the floor of the mean of the sample one pixel left and the one a row up (0 past
 * the image's first row and column), modulo 256. `adler` is the Adler-32 of the rows before these
 * (1 for none), continued over them.
 */
export function averageFilterRows(image: RawImage, y0: number, rows: number, adler = 1): FilteredRows {
  const { data, channels } = image;
  const stride = image.width * channels;
  const out = Buffer.allocUnsafe((stride + 1) * rows);
  const words = LITTLE_ENDIAN && data.byteOffset % 4 === 0 && stride % 4 === 0;
  const source = words ? new Int32Array(data.buffer, data.byteOffset, data.length / 4) : undefined;
  const filtered = words ? new Int32Array(stride / 4) : undefined;
  const filteredBytes = filtered ? new Uint8Array(filtered.buffer) : undefined;
  const sums = { a: adler & 0xffff, b: adler >>> 16 };
  for (let j = 0; j < rows; j++) {
    const y = y0 + j;
    const at = j * (stride + 1);
    out[at] = AVERAGE_FILTER;
    sums.a = (sums.a + AVERAGE_FILTER) % ADLER_BASE;
    sums.b = (sums.b + sums.a) % ADLER_BASE;
    if (source && filtered && filteredBytes) {
      filterRowInWords(source, (y * stride) / 4, y > 0 ? ((y - 1) * stride) / 4 : -1, stride / 4, channels, filtered, sums);
      out.set(filteredBytes, at + 1);
    } else {
      filterRowInBytes(data, y * stride, y > 0 ? (y - 1) * stride : -1, stride, channels, out, at + 1);
      const continued = adler32(out.subarray(at + 1, at + 1 + stride), (sums.b << 16) | sums.a);
      sums.a = continued & 0xffff;
      sums.b = continued >>> 16;
    }
  }
  return { data: out, adler: ((sums.b << 16) | sums.a) >>> 0 };
}

function filterRowInBytes(data: Uint8Array, row: number, above: number, length: number, bpp: number, out: Uint8Array, to: number): void {
  for (let i = 0; i < length; i++) {
    const left = i >= bpp ? data[row + i - bpp]! : 0;
    const up = above >= 0 ? data[above + i]! : 0;
    out[to + i] = data[row + i]! - ((left + up) >> 1);
  }
}

/**
 * The same as {@link filterRowInBytes}, four samples per 32-bit word (little-endian: the first sample is
 * the lowest byte), continuing the Adler-32 `sums` over the filtered bytes as it goes. Per byte, without
 * carries between bytes: floor((l + u) / 2) = (l & u) + ((l ^ u) >> 1), and x - y modulo 256 =
 * ((x | H) - (y & ~H)) ^ ((x ^ ~y) & H) with H the bytes' top bits. Per word of bytes x0..x3, Adler's
 * sums move as a += x0 + x1 + x2 + x3 and b += 4a + 4x0 + 3x1 + 2x2 + x3 (a before the word).
 */
function filterRowInWords(
  source: Int32Array,
  row: number,
  above: number,
  words: number,
  bpp: number,
  out: Int32Array,
  sums: { a: number; b: number },
): void {
  const shiftOut = 32 - 8 * bpp;
  const shiftIn = 8 * bpp;
  let previous = 0;
  let { a, b } = sums;
  for (let run = 0; run < words; run += ADLER_RUN_WORDS) {
    const end = Math.min(words, run + ADLER_RUN_WORDS);
    for (let k = run; k < end; k++) {
      const current = source[row + k]!;
      // The bytes `bpp` to the left: the end of the previous word joined to the start of this one.
      const left = bpp === 4 ? previous : (previous >>> shiftOut) | (current << shiftIn);
      const up = above >= 0 ? source[above + k]! : 0;
      // `| 0` keeps V8 in 32-bit integer arithmetic: the sums wrap like the words they stand for.
      const mean = ((left & up) + (((left ^ up) >>> 1) & 0x7f7f7f7f)) | 0;
      const word = (((current | 0x80808080) - (mean & 0x7f7f7f7f)) | 0) ^ ((current ^ ~mean) & 0x80808080);
      out[k] = word;
      previous = current;
      const x0 = word & 0xff;
      const x1 = (word >>> 8) & 0xff;
      const x2 = (word >>> 16) & 0xff;
      const x3 = word >>> 24;
      b += 4 * a + 4 * x0 + 3 * x1 + 2 * x2 + x3;
      a += x0 + x1 + x2 + x3;
    }
    a %= ADLER_BASE;
    b %= ADLER_BASE;
  }
  sums.a = a;
  sums.b = b;
}

/** zlib's Adler-32 of `data`, continuing from `adler`. */
export function adler32(data: Uint8Array, adler = 1): number {
  let a = adler & 0xffff;
  let b = adler >>> 16;
  const length = data.length;
  // After 2500 bytes b is still under 2^31, so V8 keeps both sums in 32-bit integers (zlib's NMAX,
  // 5552, is the bound for unsigned 32 bits).
  for (let i = 0; i < length; ) {
    const end = Math.min(i + 2500, length);
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= ADLER_BASE;
    b %= ADLER_BASE;
  }
  return ((b << 16) | a) >>> 0;
}

function deflateBand(band: Buffer, last: boolean): Promise<Buffer> {
  const options: zlib.ZlibOptions = {
    strategy: zlib.constants.Z_HUFFMAN_ONLY,
    level: 1,
    finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH,
    // Room for the whole band's output (deflate grows incompressible data by a few bytes per 16 KB):
    // with the default 16 KB, the pool thread hands back every 16 KB and this thread sends it on.
    chunkSize: band.length + (band.length >> 10) + 1024,
  };
  return new Promise((resolve, reject) => zlib.deflateRaw(band, options, (error, result) => (error ? reject(error) : resolve(result))));
}

function chunk(type: string, parts: Uint8Array[]): Uint8Array[] {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(length, 0);
  head.write(type, 4, "latin1");
  let crc = zlib.crc32(head.subarray(4));
  for (const part of parts) crc = zlib.crc32(part, crc);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc >>> 0, 0);
  return [head, ...parts, tail];
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `image` (1 to 4 channels of 8 bits: grey, grey + alpha, RGB, RGBA) as a PNG file. */
export async function encodePng(image: RawImage): Promise<Buffer> {
  assertRawImage(image, "image to encode");
  const { width, height, channels } = image;
  const deflated: Promise<Buffer>[] = [];
  let adler = 1;
  let y = 0;
  const bands = pngBands(width, height, channels);
  let streams: Buffer[];
  try {
    for (const [index, rows] of bands.entries()) {
      // Filtered bands waiting for the pool are raw-sized: a few at a time bound that memory.
      if (index >= BANDS_IN_FLIGHT) await deflated[index - BANDS_IN_FLIGHT];
      else if (index > 0) await yieldToEventLoop();
      const band = averageFilterRows(image, y, rows, adler);
      adler = band.adler;
      const stream = deflateBand(band.data, index === bands.length - 1);
      // Observed here so that a failure while an earlier band is awaited is not reported unhandled.
      stream.catch(() => {});
      deflated.push(stream);
      y += rows;
    }
    streams = await Promise.all(deflated);
  } catch (error) {
    throw new AtelierError("INTERNAL", "The result could not be encoded as image/png.", { cause: error });
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per sample
  header[9] = COLOUR_TYPES[channels];
  // Compression 0 (deflate), filter method 0 (adaptive, per-row filter bytes), no interlace.
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(adler, 0);
  return Buffer.concat([PNG_SIGNATURE, ...chunk("IHDR", [header]), ...chunk("IDAT", [ZLIB_HEADER, ...streams, trailer]), ...chunk("IEND", [])]);
}
