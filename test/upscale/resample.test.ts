/** The pixel-centred resampler and the colour-plane steps of the network pipeline. */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import type { RawImage } from "../../workers/image/raw-image.js";
import { greyKeepingAlpha, mergeGreyAlpha, replaceLuma, toGrey } from "../../workers/upscale/colour-planes.js";
import { lanczosUpscale } from "../../workers/upscale/lanczos-upscaler.js";
import { resample, resampleAsync } from "../../workers/upscale/resample.js";
import { flatImage, noiseImage } from "../onnx/pixels.js";

const ramp = (width: number, start: number, step: number): RawImage => ({
  data: Uint8Array.from({ length: width }, (_, i) => start + i * step),
  width,
  height: 1,
  channels: 1,
});

describe("resample", () => {
  it("keeps pixel centres aligned when enlarging: output j samples (j + 0.5) / s - 0.5", () => {
    // A ramp 40, 55, 70, …: away from the edges the result is the ramp sampled at those positions.
    const x2 = resample(ramp(12, 40, 15), 24, 1);
    // Lanczos reproduces a line only to within rounding; half a pixel off would be 3.75 levels off here.
    for (let j = 6; j < 18; j++) expect(Math.abs(x2.data[j]! - (40 + 15 * ((j + 0.5) / 2 - 0.5))), `x2 at ${j}`).toBeLessThanOrEqual(1);
    const x3 = resample(ramp(12, 40, 15), 36, 1);
    for (let j = 9; j < 27; j++) expect(Math.abs(x3.data[j]! - (40 + 15 * ((j + 0.5) / 3 - 0.5))), `x3 at ${j}`).toBeLessThanOrEqual(1);
    // Bicubic has 4 taps, fewer than a sweep of the vertical pass sums: the same along y.
    const column = { ...ramp(12, 40, 15), width: 1, height: 12 };
    const y2 = resample(column, 1, 24, "bicubic");
    for (let j = 4; j < 20; j++) expect(Math.abs(y2.data[j]! - (40 + 15 * ((j + 0.5) / 2 - 0.5))), `bicubic y2 at ${j}`).toBeLessThanOrEqual(1);
  });

  it("reduces with the kernel widened (antialiasing): a one-pixel checkerboard becomes flat grey", () => {
    const checker = flatImage(32, 32, 0, 1);
    for (let y = 0; y < 32; y++) for (let x = 0; x < 32; x++) checker.data[y * 32 + x] = (x + y) % 2 ? 255 : 0;
    const half = resample(checker, 16, 16);
    // The border row and column see replicated edge pixels, which are not balanced.
    for (let y = 1; y < 15; y++) for (let x = 1; x < 15; x++) expect(Math.abs(half.data[y * 16 + x]! - 128)).toBeLessThanOrEqual(1);
  });

  it("agrees with libvips' Lanczos-3 reduction, which is pixel-centred too", async () => {
    // A smooth image (noise enlarged), reduced by 2/3 as the x8-to-x6 step does.
    const big = resample(noiseImage(30, 20, 3, 7), 90, 60);
    const reduced = resample(big, 60, 40);
    const vips = await sharp(big.data, { raw: { width: 90, height: 60, channels: 3 } }).resize(60, 40, { kernel: "lanczos3", fit: "fill" }).raw().toBuffer();
    let total = 0;
    for (let i = 0; i < vips.length; i++) total += Math.abs(vips[i]! - reduced.data[i]!);
    // libvips computes its kernel in fixed point; a grid offset would show as several levels on average.
    expect(total / vips.length).toBeLessThan(0.75);
  });

  it("keeps flat images flat, sizes exact and channels independent", () => {
    const flat = resample(flatImage(7, 5, 200, 4), 20, 13);
    expect([flat.width, flat.height, flat.channels]).toEqual([20, 13, 4]);
    expect(flat.data.every((value) => value === 200)).toBe(true);
    const image = noiseImage(9, 9, 2);
    expect(resample(image, 9, 9)).toBe(image);
  });

  it("with premultiplyAlpha, keeps the colour hidden under transparent pixels out of the visible edge", () => {
    // An opaque white square on transparent black: the edge pixels it gains are part-transparent white.
    const square = flatImage(12, 12, 0, 4);
    for (let y = 4; y < 8; y++) for (let x = 4; x < 8; x++) square.data.fill(255, (y * 12 + x) * 4, (y * 12 + x + 1) * 4);
    const premultiplied = resample(square, 36, 36, "lanczos3", { premultiplyAlpha: true });
    const straight = resample(square, 36, 36, "lanczos3");
    let edge = 0;
    let darkest = 255;
    for (let p = 0; p < 36 * 36; p++) {
      const alpha = premultiplied.data[p * 4 + 3]!;
      if (alpha === 0) {
        expect(premultiplied.data.subarray(p * 4, p * 4 + 3).every((value) => value === 0), `colour under alpha 0 at ${p}`).toBe(true);
        continue;
      }
      if (alpha < 250) edge++;
      for (let c = 0; c < 3; c++) expect(premultiplied.data[p * 4 + c], `colour at ${p}`).toBe(255);
      if (straight.data[p * 4 + 3]! > 0) darkest = Math.min(darkest, straight.data[p * 4]!);
    }
    expect(edge).toBeGreaterThan(20);
    // Each channel on its own blends the black in: what libvips' premultiplication used to prevent.
    expect(darkest).toBeLessThan(200);
    // Alpha itself is resampled the same way in both.
    for (let p = 0; p < 36 * 36; p++) expect(premultiplied.data[p * 4 + 3]).toBe(straight.data[p * 4 + 3]);
  });

  it("resampleAsync gives the same pixels, gives way to the event loop, and stops when cancelled", async () => {
    const image = noiseImage(200, 150, 3, 3);
    const expected = resample(image, 800, 600);
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    const result = await resampleAsync(image, 800, 600).finally(() => clearInterval(timer));
    expect(Buffer.from(result.data).equals(Buffer.from(expected.data))).toBe(true);
    expect(turns).toBeGreaterThan(0);

    const controller = new AbortController();
    setImmediate(() => controller.abort());
    await expect(resampleAsync(image, 800, 600, "lanczos3", { signal: controller.signal })).rejects.toMatchObject({ code: "CANCELLED" });
  });
});

describe("the classical model (lanczosUpscale)", () => {
  it("is the pixel-centred Lanczos-3 of the decoded pixels, alpha premultiplied", async () => {
    const rgba = noiseImage(30, 20, 4, 11);
    const out = await lanczosUpscale(rgba, 3);
    expect(out).toEqual(resample(rgba, 90, 60, "lanczos3", { premultiplyAlpha: true }));
  });

  it("with grey, resamples one channel (two with alpha) of BT.601 luma", async () => {
    const rgb = noiseImage(16, 10, 3, 4);
    const grey = await lanczosUpscale(rgb, 2, { grey: true });
    expect([grey.width, grey.height, grey.channels]).toEqual([32, 20, 1]);
    expect(grey).toEqual(resample(toGrey(rgb), 32, 20));
    const withAlpha = await lanczosUpscale(noiseImage(16, 10, 4, 4), 2, { grey: true });
    expect(withAlpha.channels).toBe(2);
    expect(greyKeepingAlpha(noiseImage(16, 10, 4, 4)).channels).toBe(2);
  });
});

describe("colour planes", () => {
  it("replaceLuma puts the new luma in and keeps chroma", () => {
    const colour: RawImage = { data: Uint8Array.from([200, 100, 50, 30, 60, 90]), width: 2, height: 1, channels: 3 };
    const luma: RawImage = { data: Uint8Array.from([140, 70]), width: 2, height: 1, channels: 1 };
    const out = replaceLuma(colour, luma);
    expect(Array.from(toGrey(out).data)).toEqual([140, 70]);
    const cb = (r: number, g: number, b: number) => -0.1687 * r - 0.3313 * g + 0.5 * b;
    expect(cb(out.data[0]!, out.data[1]!, out.data[2]!)).toBeCloseTo(cb(200, 100, 50), 0);
    expect(cb(out.data[3]!, out.data[4]!, out.data[5]!)).toBeCloseTo(cb(30, 60, 90), 0);
  });

  it("toGrey is BT.601 luma; grey stays grey", () => {
    const rgb: RawImage = { data: Uint8Array.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 77, 77, 77]), width: 4, height: 1, channels: 3 };
    expect(Array.from(toGrey(rgb).data)).toEqual([76, 150, 29, 77]);
  });

  it("mergeGreyAlpha interleaves grey and alpha", () => {
    const grey: RawImage = { data: Uint8Array.from([1, 2]), width: 2, height: 1, channels: 1 };
    const alpha: RawImage = { data: Uint8Array.from([0, 255]), width: 2, height: 1, channels: 1 };
    expect(mergeGreyAlpha(grey, alpha)).toEqual({ data: Uint8Array.from([1, 0, 2, 255]), width: 2, height: 1, channels: 2 });
  });
});
