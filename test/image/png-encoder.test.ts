/** The banded PNG encoder: lossless for every channel count and size, valid zlib streams, and encodeImage's use of it. */
import zlib from "node:zlib";
import sharp from "sharp";
import os from "node:os";
import { describe, expect, it, vi } from "vitest";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import { encodeImage } from "../../workers/image/encode-image.js";
import { adler32, averageFilterRows, encodePng, pngBands } from "../../workers/image/png-encoder.js";
import type { RawImage } from "../../workers/image/raw-image.js";
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

  it("keeps only a few filtered bands waiting for the pool at once", async () => {
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

  it("still encodes JPEG and WebP through libvips, grey as grey", async () => {
    const jpeg = await encodeImage(photoLike(32, 16, 1), OutputFormat.OUTPUT_FORMAT_JPEG);
    expect(jpeg.mimeType).toBe("image/jpeg");
    expect((await sharp(jpeg.data).metadata()).channels).toBe(1);
    const webp = await encodeImage(photoLike(32, 16, 4), OutputFormat.OUTPUT_FORMAT_WEBP);
    expect(webp.mimeType).toBe("image/webp");
    expect((await sharp(webp.data).metadata()).hasAlpha).toBe(true);
  });
});
