/**
 * The banded PNG encoder: lossless for every channel count and size, with a separate alpha plane and
 * with every deflate strategy, valid zlib streams, and encodeImage's use of it.
 */
import zlib from "node:zlib";
import sharp from "sharp";
import os from "node:os";
import { describe, expect, it, vi } from "vitest";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import { encodeImage } from "../../workers/image/encode-image.js";
import { AtelierError } from "../../core/errors.js";
import { adler32, averageFilterRows, encodePng, pngBands, type DeflateStrategy } from "../../workers/image/png-encoder.js";
import { rawImagePipeline, type RawImage } from "../../workers/image/raw-image.js";
import { noiseImage } from "../onnx/pixels.js";

/** Smooth gradients with noise on top: compresses like a photograph, and every filter case is hit. */
function photoLike(width: number, height: number, channels: RawImage["channels"]): RawImage {
  const noise = noiseImage(width, height, channels, 7).data;
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        const i = (y * width + x) * channels + c;
        data[i] = (x * (c + 1) + y * 2 + (noise[i]! & 15)) & 255;
      }
    }
  }
  return { data, width, height, channels };
}

/**
 * A cutout's structure: a soft-edged disc of photo-like colour on a transparent background of zeros
 * (0,0,0,0, as compose.ts writes it), a flat fill band across the top, colour and alpha as planes.
 */
function cutoutLike(width: number, height: number): { colour: RawImage; alpha: RawImage } {
  const photo = photoLike(width, height, 3).data;
  const colour = new Uint8Array(width * height * 3);
  const alpha = new Uint8Array(width * height);
  const radius = Math.min(width, height) * 0.35;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      const distance = Math.hypot(x - width / 2, y - height / 2);
      // Opaque inside, a soft ramp of about 6 px at the edge, clear outside.
      const a = y < height / 8 ? 255 : Math.max(0, Math.min(255, Math.round((radius - distance) * 40 + 128)));
      alpha[p] = a;
      if (a === 0) continue;
      for (let c = 0; c < 3; c++) colour[p * 3 + c] = y < height / 8 ? [30, 200, 90][c]! : photo[p * 3 + c]!;
    }
  }
  return { colour: { data: colour, width, height, channels: 3 }, alpha: { data: alpha, width, height, channels: 1 } };
}

/** Colour and an alpha plane interleaved, the reference for what the file holds. */
function interleave(colour: RawImage, alpha: RawImage): RawImage {
  const channels = colour.channels + 1;
  const data = new Uint8Array(colour.width * colour.height * channels);
  for (let p = 0; p < colour.width * colour.height; p++) {
    for (let c = 0; c < colour.channels; c++) data[p * channels + c] = colour.data[p * colour.channels + c]!;
    data[p * channels + colour.channels] = alpha.data[p]!;
  }
  return { data, width: colour.width, height: colour.height, channels: channels as RawImage["channels"] };
}

/** The PNG specification's Average filter, sample by sample, with its filter bytes: the reference. */
function referenceFilter(image: RawImage): Buffer {
  const stride = image.width * image.channels;
  const out = Buffer.alloc((stride + 1) * image.height);
  for (let y = 0; y < image.height; y++) {
    out[y * (stride + 1)] = 3;
    for (let i = 0; i < stride; i++) {
      const at = y * stride + i;
      const left = i >= image.channels ? image.data[at - image.channels]! : 0;
      const up = y > 0 ? image.data[at - stride]! : 0;
      out[y * (stride + 1) + 1 + i] = (image.data[at]! - Math.floor((left + up) / 2) + 256) % 256;
    }
  }
  return out;
}

/** The same bytes in a view that starts one byte into its buffer (never on a word boundary). */
function offByOne(image: RawImage): RawImage {
  const shifted = new Uint8Array(image.data.length + 1);
  shifted.set(image.data, 1);
  return { ...image, data: shifted.subarray(1) };
}

/**
 * Decodes with libvips (libpng checks every chunk's CRC and the stream's Adler-32). `channels` is the
 * file's; `data` is RGB or RGBA, as libvips hands grey out.
 */
async function decode(png: Uint8Array): Promise<{ data: Buffer; channels: number; width: number; height: number }> {
  const { channels = 0 } = await sharp(png).metadata();
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return { data, channels, width: info.width, height: info.height };
}

/** `image`'s samples as libvips decodes them: grey repeated into RGB, alpha kept. */
function asDecoded(image: RawImage): Buffer {
  if (image.channels >= 3) return Buffer.from(image.data);
  const alpha = image.channels === 2;
  const out = Buffer.alloc(image.width * image.height * (alpha ? 4 : 3));
  for (let p = 0, o = 0; p < image.width * image.height; p++) {
    const grey = image.data[p * image.channels]!;
    out[o++] = grey;
    out[o++] = grey;
    out[o++] = grey;
    if (alpha) out[o++] = image.data[p * 2 + 1]!;
  }
  return out;
}

/** The IDAT chunks' data joined: the zlib stream. */
function idatStream(png: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString("latin1", at + 4, at + 8) === "IDAT") parts.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  return Buffer.concat(parts);
}

describe("encodePng", () => {
  const cases: [number, number, RawImage["channels"]][] = [
    [1, 1, 3],
    [1, 7, 1],
    [5, 3, 2],
    [3, 5, 4],
    [7, 9, 3],
    [64, 48, 4],
    // Several bands, word-aligned rows (1200 x 3 bytes) and not (1001 x 3).
    [1200, 900, 3],
    [1001, 701, 3],
    [700, 500, 1],
    [640, 480, 2],
    [800, 600, 4],
  ];
  it.each(cases)("%ix%i with %i channels decodes to the same pixels", async (width, height, channels) => {
    const image = photoLike(width, height, channels);
    const png = await encodePng(image);
    const back = await decode(png);
    expect([back.width, back.height, back.channels]).toEqual([width, height, channels]);
    expect(back.data.equals(asDecoded(image))).toBe(true);
  });

  it("joins the bands into one zlib stream whose Adler-32 zlib accepts", async () => {
    const image = photoLike(1200, 900, 3);
    expect(pngBands(1200, 900, 3).length).toBeGreaterThan(1);
    const png = await encodePng(image);
    // inflateSync checks the trailer's Adler-32 and that the stream ends exactly once, at the last band.
    const filtered = zlib.inflateSync(idatStream(png));
    expect(filtered.equals(averageFilterRows(image, 0, 900).data)).toBe(true);
  });

  it("cuts a 1 MP image into two bands per core at least, so one band's filter overlaps another's deflate", () => {
    const cores = Math.min(4, os.availableParallelism());
    const bands = pngBands(1024, 1024, 3);
    expect(bands.length).toBeGreaterThanOrEqual(2 * cores);
    expect(bands.reduce((sum, rows) => sum + rows, 0)).toBe(1024);
    // Never a band under 256 KB: a 300x300 RGB image (270 KB) stays whole.
    expect(pngBands(300, 300, 3)).toEqual([300]);
  });

  it("keeps only a few filtered bands waiting for the pool at once, reusing none before it is deflated", async () => {
    const image = photoLike(3000, 2200, 3);
    expect(pngBands(3000, 2200, 3).length).toBeGreaterThan(8);
    let waiting = 0;
    let most = 0;
    const deflateRaw = zlib.deflateRaw;
    const spy = vi.spyOn(zlib, "deflateRaw").mockImplementation(((buffer: zlib.InputType, options: zlib.ZlibOptions, callback: zlib.CompressCallback) => {
      most = Math.max(most, ++waiting);
      // Slow pool threads: without a bound every band would be filtered and waiting.
      setTimeout(() => deflateRaw(buffer, options, (error, result) => {
        waiting--;
        callback(error, result);
      }), 20);
    }) as typeof zlib.deflateRaw);
    try {
      const back = await decode(await encodePng(image));
      expect(back.data.equals(Buffer.from(image.data))).toBe(true);
    } finally {
      spy.mockRestore();
    }
    expect(most).toBe(2 * Math.min(4, os.availableParallelism()));
  });

  it("reads pixels from a view that does not start on a word boundary", async () => {
    const image = photoLike(400, 300, 4);
    const shifted = new Uint8Array(image.data.length + 1);
    shifted.set(image.data, 1);
    const view: RawImage = { ...image, data: shifted.subarray(1) };
    expect((await decode(await encodePng(view))).data.equals(Buffer.from(image.data))).toBe(true);
    // The word-at-a-time filter (aligned rows) and the sample-at-a-time one (this view) agree, and so
    // do the Adler-32 sums each keeps as it filters, with zlib's over the same bytes.
    const [bytewise, wordwise] = [averageFilterRows(view, 100, 200, 12345), averageFilterRows(image, 100, 200, 12345)];
    expect(bytewise.data.equals(wordwise.data)).toBe(true);
    expect(wordwise.adler).toBe(adler32(wordwise.data, 12345));
    expect(bytewise.adler).toBe(wordwise.adler);
    const whole = averageFilterRows(image, 0, 300);
    const stored = zlib.deflateSync(whole.data, { level: 0 });
    expect(whole.adler).toBe(stored.readUInt32BE(stored.length - 4));
  });

  it("filters rows as the PNG specification's Average filter", () => {
    const image = noiseImage(6, 3, 3, 3);
    const filtered = averageFilterRows(image, 1, 2).data;
    const stride = 18;
    for (let j = 0; j < 2; j++) {
      expect(filtered[j * (stride + 1)]).toBe(3);
      for (let i = 0; i < stride; i++) {
        const at = (1 + j) * stride + i;
        const left = i >= 3 ? image.data[at - 3]! : 0;
        const up = image.data[at - stride]!;
        expect(filtered[j * (stride + 1) + 1 + i]).toBe((image.data[at]! - Math.floor((left + up) / 2) + 256) % 256);
      }
    }
  });

  it("computes zlib's Adler-32, also continued over pieces", () => {
    const data = noiseImage(300, 100, 3, 5).data;
    const fromZlib = zlib.deflateSync(data, { level: 0 }).readUInt32BE(zlib.deflateSync(data, { level: 0 }).length - 4);
    expect(adler32(data)).toBe(fromZlib);
    expect(adler32(data.subarray(40_000), adler32(data.subarray(0, 40_000)))).toBe(fromZlib);
    expect(adler32(new Uint8Array(100_000).fill(255))).toBe(zlib.deflateSync(new Uint8Array(100_000).fill(255), { level: 0 }).readUInt32BE(zlib.deflateSync(new Uint8Array(100_000).fill(255), { level: 0 }).length - 4));
  });
});

describe("encodePng with a separate alpha plane", () => {
  // Widths: word-aligned rows with whole groups of four pixels (96), a remainder of one to three
  // pixels after the groups of four (97, 98, 99), a single pixel; several bands at 1201 x 700.
  const sizes: [number, number][] = [
    [96, 40],
    [97, 41],
    [98, 3],
    [99, 5],
    [1, 1],
    [1201, 700],
  ];
  it.each(sizes)("RGB and alpha %ix%i decode to the interleaved RGBA pixels", async (width, height) => {
    const { colour, alpha } = cutoutLike(width, height);
    const rgba = interleave(colour, alpha);
    const back = await decode(await encodePng(colour, { alpha, strategy: "rle" }));
    expect([back.width, back.height, back.channels]).toEqual([width, height, 4]);
    expect(back.data.equals(Buffer.from(rgba.data))).toBe(true);
    // Filtering the planes is filtering the interleaved image, Adler-32 included.
    const [planes, interleaved] = [averageFilterRows({ image: colour, alpha }, 0, height), averageFilterRows(rgba, 0, height)];
    expect(planes.data.equals(interleaved.data)).toBe(true);
    expect(planes.adler).toBe(interleaved.adler);
  });

  it("joins grey and alpha into grey + alpha, and reads planes that start anywhere in their buffers", async () => {
    const { colour, alpha } = cutoutLike(61, 23);
    const grey: RawImage = { data: colour.data.filter((_, i) => i % 3 === 1), width: 61, height: 23, channels: 1 };
    const back = await decode(await encodePng(grey, { alpha }));
    expect(back.channels).toBe(2);
    expect(back.data.equals(asDecoded(interleave(grey, alpha)))).toBe(true);
    const shifted = await decode(await encodePng(offByOne(colour), { alpha: offByOne(alpha) }));
    expect(shifted.data.equals(Buffer.from(interleave(colour, alpha).data))).toBe(true);
  });

  it("refuses an alpha plane of another size, or beside an image that has alpha already", async () => {
    const { colour, alpha } = cutoutLike(16, 8);
    const small: RawImage = { data: alpha.data.subarray(0, 16 * 4), width: 16, height: 4, channels: 1 };
    await expect(encodePng(colour, { alpha: small })).rejects.toBeInstanceOf(AtelierError);
    await expect(encodePng(interleave(colour, alpha), { alpha })).rejects.toThrow(/alpha plane beside a grey or RGB image/);
  });
});

describe("filtering flat areas", () => {
  it("gives the specification's bytes and zlib's Adler-32 on transparent zeros, flat fills and soft edges", () => {
    // Flat areas take a shortcut in the word filter: runs of zeros (a cutout's background), one
    // colour (a fill), one grey level (a matte's inside), each meeting soft edges.
    const { colour, alpha } = cutoutLike(128, 96);
    const rgba = interleave(colour, alpha);
    const matte: RawImage = { ...alpha };
    const fill: RawImage = { data: new Uint8Array(128 * 96 * 4).fill(200), width: 128, height: 96, channels: 4 };
    for (const image of [rgba, matte, fill, colour]) {
      const words = averageFilterRows(image, 0, image.height);
      expect(words.data.equals(referenceFilter(image))).toBe(true);
      const stored = zlib.deflateSync(words.data, { level: 0 });
      expect(words.adler).toBe(stored.readUInt32BE(stored.length - 4));
      // The sample-at-a-time filter (an unaligned view) agrees.
      const bytewise = averageFilterRows(offByOne(image), 0, image.height);
      expect(bytewise.data.equals(words.data)).toBe(true);
      expect(bytewise.adler).toBe(words.adler);
    }
  });
});

describe("deflate strategies", () => {
  const strategies: DeflateStrategy[] = ["huffman-only", "rle", "default"];
  it.each(strategies)("%s decodes to the same pixels, in several bands", async (strategy) => {
    const { colour, alpha } = cutoutLike(1200, 700);
    expect(pngBands(1200, 700, 4).length).toBeGreaterThan(1);
    const png = await encodePng(colour, { alpha, strategy });
    expect((await decode(png)).data.equals(Buffer.from(interleave(colour, alpha).data))).toBe(true);
    expect(zlib.inflateSync(idatStream(png)).equals(averageFilterRows({ image: colour, alpha }, 0, 700).data)).toBe(true);
  });

  it("codes a cutout's transparent runs as runs with rle, byte by byte with huffman-only", async () => {
    // Half or more of this cutout is zeros after the filter: at least one bit each with Huffman codes alone.
    const { colour, alpha } = cutoutLike(800, 600);
    const huffman = await encodePng(colour, { alpha, strategy: "huffman-only" });
    const rle = await encodePng(colour, { alpha, strategy: "rle" });
    expect(rle.length).toBeLessThan(0.8 * huffman.length);
  });
});

describe("encodeImage with raw pixels", () => {
  it("writes grey as a grey PNG and RGBA with its alpha", async () => {
    for (const channels of [1, 2, 3, 4] as const) {
      const image = photoLike(33, 17, channels);
      const encoded = await encodeImage(image, OutputFormat.OUTPUT_FORMAT_PNG);
      expect(encoded.mimeType).toBe("image/png");
      expect([encoded.width, encoded.height]).toEqual([33, 17]);
      const back = await decode(encoded.data);
      expect(back.channels).toBe(channels);
      expect(back.data.equals(asDecoded(image))).toBe(true);
    }
  });

  it("joins colour and a separate alpha plane: PNG in bands, JPEG and WebP as libvips encodes the interleaved pixels", async () => {
    const { colour, alpha } = cutoutLike(64, 40);
    const rgba = interleave(colour, alpha);
    const png = await encodeImage({ colour, alpha }, OutputFormat.OUTPUT_FORMAT_PNG, { deflate: "rle" });
    expect(png).toMatchObject({ mimeType: "image/png", width: 64, height: 40 });
    expect(Buffer.from(png.data).equals(await encodePng(colour, { alpha, strategy: "rle" }))).toBe(true);
    expect((await decode(png.data)).data.equals(Buffer.from(rgba.data))).toBe(true);
    // What callers used to hand libvips (one interleaved RGBA image) gives the same files.
    for (const format of [OutputFormat.OUTPUT_FORMAT_JPEG, OutputFormat.OUTPUT_FORMAT_WEBP]) {
      const joined = await encodeImage({ colour, alpha }, format);
      const interleaved = await encodeImage(rawImagePipeline(rgba), format);
      expect(joined.mimeType).toBe(interleaved.mimeType);
      expect(Buffer.from(joined.data).equals(Buffer.from(interleaved.data))).toBe(true);
    }
    const opaque = await encodeImage({ colour }, OutputFormat.OUTPUT_FORMAT_PNG);
    expect((await decode(opaque.data)).channels).toBe(3);
  });

  it("still encodes JPEG and WebP through libvips, grey as grey", async () => {
    const jpeg = await encodeImage(photoLike(32, 16, 1), OutputFormat.OUTPUT_FORMAT_JPEG);
    expect(jpeg.mimeType).toBe("image/jpeg");
    expect((await sharp(jpeg.data).metadata()).channels).toBe(1);
    const webp = await encodeImage(photoLike(32, 16, 4), OutputFormat.OUTPUT_FORMAT_WEBP);
    expect(webp.mimeType).toBe("image/webp");
    expect((await sharp(webp.data).metadata()).hasAlpha).toBe(true);
  });
});
