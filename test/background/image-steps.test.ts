/**
 * The background-removal steps on their own, without a network: box means, resampling, guided
 * refinement, foreground estimation (decontamination) with the true matte, and the compositing of
 * each kind of fill.
 */
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import { resampleBilinear, RowSampler } from "../../workers/background/bilinear.js";
import { blurredBackground } from "../../workers/background/background-fill.js";
import { boxMean, type FloatPlanes } from "../../workers/background/box-filter.js";
import { composeImage, composeInBands, composeMatte, type ComposedImage } from "../../workers/background/compose.js";
import { blurFusionMeans } from "../../workers/background/foreground-estimate.js";
import { classifyField, MatteField, sideMeansNeeded } from "../../workers/background/matte-field.js";
import { guideStatistics } from "../../workers/background/guided-filter.js";
import { refineMatte, refineRadius } from "../../workers/background/refine-matte.js";
import { blurFusionRadii } from "../../workers/background/remove-background.js";
import { decodeSource, WORKING_FROM_FULL_PIXELS } from "../../workers/background/decode-source.js";
import { resizeForNetwork } from "../../workers/background/network-input.js";
import { PlanePool } from "../../workers/background/scratch-plane.js";
import { toUnitPlanes, workingSize } from "../../workers/background/working-image.js";
import { openImage } from "../../core/open-image.js";
import { encodeImage } from "../../workers/image/encode-image.js";
import { hasTestPhotos } from "../support/test-assets.js";
import { backgroundBleed, BLUE_SCREEN, buildComposite, CUP, GREEN_SCREEN, PERSON, type Composite } from "./ground-truth.js";

function planes(width: number, height: number, channels: number, value: (x: number, y: number, c: number) => number): FloatPlanes {
  const data = new Float32Array(width * height * channels);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) for (let c = 0; c < channels; c++) data[(y * width + x) * channels + c] = value(x, y, c);
  return { data, width, height, channels };
}

/** A coefficient field that reproduces `alpha` exactly (a = 0, b = alpha). */
function fieldOf(alpha: Float32Array, width: number, height: number): FloatPlanes {
  return planes(width, height, 4, (x, y, c) => (c === 3 ? alpha[y * width + x]! : 0));
}

describe("box means", () => {
  /** The window average summed pixel by pixel: the reference the running sums must match. */
  function directMean(source: FloatPlanes, radius: number, x: number, y: number, c: number): number {
    let sum = 0;
    let count = 0;
    for (let v = Math.max(0, y - radius); v <= Math.min(source.height - 1, y + radius); v++) {
      for (let u = Math.max(0, x - radius); u <= Math.min(source.width - 1, x + radius); u++) {
        sum += source.data[(v * source.width + u) * source.channels + c]!;
        count++;
      }
    }
    return sum / count;
  }

  it("match a direct window average, borders included, for any channel count and radius", () => {
    // Channel counts the steps use (1 to 13); radii from none to wider than the image.
    for (const channels of [1, 2, 4, 13]) {
      const source = planes(13, 9, channels, (x, y, c) => Math.sin(x * 1.3 + y * 0.7 + c) * 10);
      for (const radius of [0, 1, 3, 6, 7, 20]) {
        const fast = boxMean(source, radius);
        // Written over its own source (how the guided filter and foreground estimate call it): the same means.
        const inPlace = { ...source, data: source.data.slice() };
        boxMean(inPlace, radius, inPlace.data);
        expect(inPlace.data).toEqual(fast.data);
        for (let y = 0; y < 9; y++) {
          for (let x = 0; x < 13; x++) {
            for (let c = 0; c < channels; c++) expect(fast.data[(y * 13 + x) * channels + c]).toBeCloseTo(directMean(source, radius, x, y, c), 4);
          }
        }
      }
    }
  });
});

describe("decoding the source", () => {
  async function counted(width: number, height: number) {
    const png = await sharp({ create: { width, height, channels: 3, background: "#336699" } }).png().toBuffer();
    const opened = await openImage(png, { maxBytes: 1e8, maxInputPixels: 1e8, maxOutputPixels: 1e8 });
    const source = { ...opened, pipeline: () => (source.pipelines++, opened.pipeline()), pipelines: 0 };
    return source;
  }

  it("decodes the network's input alone first, then the full size, and makes a small source's working copy from it", async () => {
    const source = await counted(64, 48);
    const decoded = decodeSource(source, { network: { width: 16, height: 16 }, networkKernel: "linear", working: { width: 32, height: 24 } });
    expect(source.pipelines).toBe(1);
    const input = await decoded.networkInput;
    expect([input.width, input.height, input.channels]).toEqual([16, 16, 3]);
    const [{ rgb }, working] = await Promise.all([decoded.full, decoded.working]);
    expect(source.pipelines).toBe(2);
    expect([rgb.width, rgb.height, working.width, working.height]).toEqual([64, 48, 32, 24]);
    expect(working.data[0]).toBeCloseTo(0x33 / 255, 6);
  });

  it("decodes a large source's working copy on its own (its full decode outlasts the network)", async () => {
    const source = await counted(2000, WORKING_FROM_FULL_PIXELS / 2000 + 1);
    const decoded = decodeSource(source, { network: { width: 16, height: 16 }, networkKernel: "linear", working: { width: 400, height: 200 } });
    await Promise.all([decoded.networkInput, decoded.full, decoded.working]);
    expect(source.pipelines).toBe(3);
  });
});

describe("the network's input", () => {
  /** Red rises across the image by `step.x` a pixel, green down it by `step.y`: an off-grid sample shows on either axis. */
  function ramps(width: number, height: number, step: { x: number; y: number }) {
    const data = new Uint8Array(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) data.set([x * step.x, y * step.y, 128], (y * width + x) * 3);
    }
    return { data, width, height, channels: 3 as const };
  }

  /**
   * Checks that output pixel j of `to` samples an axis of `from` pixels at (j + 0.5) * from / to - 0.5,
   * the grid bilinear.ts maps the network's matte back with. On a ramp every kernel gives the ramp's
   * value there, away from the edges (where the window is cut).
   */
  function expectCentred(image: { data: Uint8Array; width: number; height: number }, from: { width: number; height: number }, step: { x: number; y: number }) {
    const margin = (size: number, to: number) => 3 * Math.max(1, size / to);
    let checked = 0;
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) {
        const u = ((x + 0.5) * from.width) / image.width - 0.5;
        const v = ((y + 0.5) * from.height) / image.height - 0.5;
        const inside = (p: number, size: number, to: number) => p >= margin(size, to) && p <= size - 1 - margin(size, to);
        if (!inside(u, from.width, image.width) || !inside(v, from.height, image.height)) continue;
        const i = (y * image.width + x) * 3;
        expect(Math.abs(image.data[i]! - u * step.x), `red at ${x},${y}`).toBeLessThanOrEqual(1);
        expect(Math.abs(image.data[i + 1]! - v * step.y), `green at ${x},${y}`).toBeLessThanOrEqual(1);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  }

  // Enlarged on both axes (a photo smaller than ISNet's 1024 px), on one, and reduced on both.
  const cases = [
    { from: { width: 20, height: 16 }, to: { width: 32, height: 28 }, step: { x: 12, y: 15 } },
    { from: { width: 20, height: 200 }, to: { width: 32, height: 48 }, step: { x: 12, y: 1 } },
    { from: { width: 200, height: 160 }, to: { width: 64, height: 48 }, step: { x: 1, y: 1.5 } },
  ];

  it("samples the picture at pixel centres, enlarged or reduced, for both kernels", async () => {
    for (const { from, to, step } of cases) {
      const image = ramps(from.width, from.height, step);
      for (const kernel of ["linear", "lanczos3"] as const) {
        const resized = await resizeForNetwork(image, to, kernel);
        expect([resized.width, resized.height, resized.channels]).toEqual([to.width, to.height, 3]);
        expectCentred(resized, from, step);
      }
    }
  });

  it("is decoded from the source's bytes on the same grid", async () => {
    for (const { from, to, step } of cases) {
      const image = ramps(from.width, from.height, step);
      const png = await sharp(image.data, { raw: { width: from.width, height: from.height, channels: 3 } }).png().toBuffer();
      const source = await openImage(png, { maxBytes: 1e8, maxInputPixels: 1e8, maxOutputPixels: 1e8 });
      const decoded = decodeSource(source, { network: to, networkKernel: "linear", working: from });
      expectCentred(await decoded.networkInput, from, step);
      await Promise.all([decoded.full, decoded.working]);
    }
  });
});

describe("plane pool", () => {
  it("lends each removal planes of its own and takes them back at its end", () => {
    const pool = new PlanePool();
    const first = pool.lease();
    const a = first.allocate(100);
    const b = first.allocate(50);
    expect(a.length).toBe(100);
    expect(a.buffer).not.toBe(b.buffer);
    // A second removal meanwhile gets other buffers.
    const second = pool.lease();
    const c = second.allocate(100);
    expect([a.buffer, b.buffer]).not.toContain(c.buffer);
    first.release();
    // Given back: the next lease reuses them, the smallest that fits first.
    const third = pool.lease();
    expect(third.allocate(40).buffer).toBe(b.buffer);
    expect(third.allocate(90).buffer).toBe(a.buffer);
    // Taken after its release (a late decode), a plane is not given back twice.
    const late = first.allocate(10);
    first.release();
    expect(pool.lease().allocate(10).buffer).not.toBe(late.buffer);
  });
});

describe("bilinear resampling", () => {
  it("keeps pixel centres aligned: a linear ramp stays the same ramp at any size", () => {
    const ramp = planes(8, 1, 1, (x) => x + 0.5);
    const wide = resampleBilinear(ramp, 32, 1);
    // Source pixel x covers [x, x+1); its centre value is x + 0.5 = position in source pixels.
    for (let x = 2; x < 30; x++) expect(wide.data[x]).toBeCloseTo(((x + 0.5) / 32) * 8, 5);
  });

  it("bounds the working copy to a quarter megapixel, never enlarging", () => {
    expect(workingSize(600, 400)).toEqual({ width: 600, height: 400 });
    const big = workingSize(4000, 3000);
    expect(big.width * big.height).toBeLessThanOrEqual(512 * 512);
    expect(big.width * big.height).toBeGreaterThan(0.99 * 512 * 512);
    expect(big.width / big.height).toBeCloseTo(4 / 3, 2);
  });
});

describe("guided refinement", () => {
  it("snaps a blurry network matte onto the image's sharp edge", () => {
    // A two-colour image with a vertical edge at x = 40, and the matte a network at 1/8 of the size
    // would give: the right edge position, but a ramp 16 pixels wide once enlarged.
    const width = 80;
    const height = 40;
    const guide = planes(width, height, 3, (x, _y, c) => (x < 40 ? [0.2, 0.5, 0.8][c]! : [0.9, 0.4, 0.1][c]!));
    const coarse = planes(10, 5, 1, (x) => (x < 5 ? 1 : 0));
    const bilinear = refineMatte(coarse, guide, { method: "bilinear" }).alpha;
    const guided = refineMatte(coarse, guide).alpha;
    const row = (alpha: FloatPlanes) => Array.from(alpha.data.subarray(20 * width, 21 * width));
    const soft = (alpha: FloatPlanes) => row(alpha).filter((a) => a > 0.1 && a < 0.9).length;
    const step = (alpha: FloatPlanes) => row(alpha)[39]! - row(alpha)[40]!;
    expect(soft(bilinear)).toBeGreaterThanOrEqual(5);
    expect(step(bilinear)).toBeLessThan(0.2);
    expect(soft(guided)).toBe(0);
    expect(step(guided)).toBeGreaterThan(0.85);
  });

  it("takes the guide's statistics computed beforehand (while the network runs) and gives the same field", () => {
    const guide = planes(64, 48, 3, (x, y, c) => ((x * (c + 1) + y * 3) % 37) / 37);
    const coarse = planes(16, 12, 1, (x, y) => (Math.hypot(x - 8, y - 6) < 4 ? 1 : 0));
    const radius = refineRadius(guide, 16, 12);
    const alone = refineMatte(coarse, guide);
    const before = refineMatte(coarse, guide, {}, guideStatistics(guide, radius));
    expect(before.coefficients.data).toEqual(alone.coefficients.data);
    // Statistics for another radius are not used.
    expect(refineMatte(coarse, guide, {}, guideStatistics(guide, radius + 2)).coefficients.data).toEqual(alone.coefficients.data);
  });

  it("gives the same matte at full resolution from the working-resolution field", () => {
    const guide = planes(64, 48, 3, (x, y, c) => ((x * (c + 1) + y * 3) % 37) / 37);
    const coarse = planes(16, 12, 1, (x, y) => (Math.hypot(x - 8, y - 6) < 4 ? 1 : 0));
    const refined = refineMatte(coarse, guide);
    const rgb = { data: Uint8Array.from(guide.data, (v) => Math.round(v * 255)), width: 64, height: 48, channels: 3 as const };
    const matte = composeMatte({ rgb, coefficients: refined.coefficients });
    let worst = 0;
    for (let i = 0; i < matte.data.length; i++) worst = Math.max(worst, Math.abs(matte.data[i]! / 255 - refined.alpha.data[i]!));
    expect(worst).toBeLessThan(3 / 255);
  });
});

describe("matte field", () => {
  it("marks for the side means every pixel of each 2 x 2 block not of one certain class", () => {
    // Classes 0 (clear), 1 (opaque), 2 (mixed), 5 x 4.
    const classes = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(Array.from(sideMeansNeeded(classes, 5, 4))).toEqual([0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
    // One row: neighbours along it.
    expect(Array.from(sideMeansNeeded(Uint8Array.from([0, 0, 1, 1, 1]), 5, 1))).toEqual([0, 1, 1, 0, 0]);
  });


  it("decides certain pixels without interpolating and matches full interpolation everywhere", () => {
    // A field with flat regions (0 and 1 whatever the colour) and colour-dependent ones, enlarged 5x.
    const field = planes(20, 12, 4, (x, y, c) => {
      if (x < 6) return c === 3 ? -0.1 : 0.02; // at most -0.1 + 3 * 0.02 < 0: certainly clear
      if (x > 13) return c === 3 ? 1.2 : -0.03; // at least 1.2 - 3 * 0.03 > 1: certainly opaque
      return c === 3 ? 0.2 : [0.5, -0.3, 0.2][c]! * Math.sin(x + y);
    });
    const width = 100;
    const height = 60;
    const exact = new RowSampler(field, width, height);
    const matte = new MatteField(field, width, height);
    const alphas = new Float64Array(width);
    for (let y = 0; y < height; y++) {
      const c = exact.row(y);
      matte.row(y);
      const colours = Uint8Array.from({ length: width * 3 }, (_, i) => [((i / 3) | 0) * 37, y * 53, (((i / 3) | 0) + y) * 11][i % 3]! % 256);
      // Two spans of the row, the second starting mid-row: each reads its own pixels' colours.
      matte.alphas(0, 40, colours, 0, alphas);
      matte.alphas(40, width, colours, 40, alphas.subarray(40));
      for (let x = 0; x < width; x++) {
        const [r, g, b] = [(x * 37) % 256, (y * 53) % 256, ((x + y) * 11) % 256];
        const direct = Math.min(1, Math.max(0, (c[x * 4]! * r + c[x * 4 + 1]! * g + c[x * 4 + 2]! * b) / 255 + c[x * 4 + 3]!));
        expect(alphas[x]).toBeCloseTo(direct, 5);
      }
    }
  });
});

describe.runIf(hasTestPhotos())("foreground estimation (decontamination) with the true matte", () => {
  let pairs: [string, Composite, Composite][];
  beforeAll(async () => {
    pairs = [
      ["person, green vs blue screen", await buildComposite(PERSON, GREEN_SCREEN), await buildComposite(PERSON, BLUE_SCREEN)],
      ["person, rocket vs cat photo", await buildComposite(PERSON, "rocket.jpg"), await buildComposite(PERSON, "chelsea.png")],
      ["cup, rocket vs motorcycle photo", await buildComposite(CUP, "rocket.jpg"), await buildComposite(CUP, "motorcycle_left.png")],
    ];
  });

  function cutout(composite: Composite, estimate: boolean) {
    const { width, height } = composite;
    // A copy: compose writes over the colour it is handed.
    const rgb = { data: composite.image.slice(), width, height, channels: 3 as const };
    const guide = toUnitPlanes(rgb);
    const alpha = { data: composite.alpha, width, height, channels: 1 };
    const sides = estimate ? blurFusionMeans(guide, alpha, blurFusionRadii(width, height)) : { foreground: guide, background: guide };
    return interleaved(composeImage({ rgb, coefficients: fieldOf(composite.alpha, width, height) }, sides, { kind: "transparent" }));
  }

  it("computes the side means only where compose reads them, giving the same cutout", () => {
    for (const [, composite] of pairs) {
      const { width, height } = composite;
      const guide = toUnitPlanes({ data: composite.image, width, height, channels: 3 });
      const alpha = { data: composite.alpha, width, height, channels: 1 };
      const field = fieldOf(composite.alpha, width, height);
      const marks = sideMeansNeeded(classifyField(field), width, height);
      const marked = marks.reduce((sum, mark) => sum + mark, 0);
      // Sparse: the band around the subject's outline, far from every pixel.
      expect(marked).toBeGreaterThan(1000);
      expect(marked).toBeLessThan(width * height * 0.25);
      const everywhere = blurFusionMeans(guide, alpha, blurFusionRadii(width, height));
      const where = blurFusionMeans(guide, alpha, blurFusionRadii(width, height), marks);
      let worst = 0;
      for (let p = 0; p < width * height; p++) {
        if (!marks[p]) continue;
        for (let c = 0; c < 3; c++) {
          worst = Math.max(worst, Math.abs(where.foreground.data[p * 3 + c]! - everywhere.foreground.data[p * 3 + c]!));
          worst = Math.max(worst, Math.abs(where.background.data[p * 3 + c]! - everywhere.background.data[p * 3 + c]!));
        }
      }
      expect(worst).toBeLessThan(1e-5);
      // Compose reads no pixel that was left out: the cutouts agree, up to float rounding at a half.
      const cut = (sides: typeof where) => interleaved(composeImage({ rgb: { data: composite.image.slice(), width, height, channels: 3 }, coefficients: field }, sides, { kind: "transparent" })).data;
      const [full, sparse] = [cut(everywhere), cut(where)];
      let differing = 0;
      let largest = 0;
      full.forEach((value, i) => {
        largest = Math.max(largest, Math.abs(value - sparse[i]!));
        if (value !== sparse[i]) differing++;
      });
      expect(largest).toBeLessThanOrEqual(1);
      expect(differing).toBeLessThan(10);
    }
  });

  it("leaves at most a tenth of the old background where the source colours carry half", () => {
    // The bleed measure (ground-truth.ts): the share of the backdrop difference that survives in the
    // cutout colours of the transition band. Source colours carry mean(1 - alpha) = 0.5 of it.
    for (const [, first, second] of pairs) {
      const raw = backgroundBleed(cutout(first, false), first, cutout(second, false), second);
      const cleaned = backgroundBleed(cutout(first, true), first, cutout(second, true), second);
      expect(raw.pixels).toBeGreaterThan(1000);
      expect(raw.bleed).toBeGreaterThan(0.45);
      expect(Math.abs(cleaned.bleed)).toBeLessThan(0.1);
    }
  });
});

/** A composite's colour and alpha planes as one interleaved RGB or RGBA image. */
function interleaved({ colour, alpha }: ComposedImage): { data: Uint8Array; channels: 3 | 4 } {
  if (!alpha) return { data: colour.data, channels: 3 };
  const pixels = colour.width * colour.height;
  const data = new Uint8Array(pixels * 4);
  for (let p = 0; p < pixels; p++) {
    data.set(colour.data.subarray(p * 3, p * 3 + 3), p * 4);
    data[p * 4 + 3] = alpha.data[p]!;
  }
  return { data, channels: 4 };
}

/** Equal within one 8-bit step (float rounding may land either side of .5). */
function expectBytes(actual: Uint8Array, expected: number[]): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((value, i) => expect(Math.abs(value - expected[i]!), `sample ${i}: ${value} vs ${expected[i]}`).toBeLessThanOrEqual(1));
}

describe("compositing", () => {
  // A 3x1 image: subject, half-covered edge pixel, background. True matte 1, 0.5, 0.
  // A fresh copy per call: compose writes over the colour it is handed.
  const source = () => ({ data: Uint8Array.from([200, 100, 50, 120, 160, 100, 40, 220, 150]), width: 3, height: 1, channels: 3 as const });
  const rgb = source();
  const alpha = Float32Array.from([1, 0.5, 0]);
  const coefficients = fieldOf(alpha, 3, 1);
  // Side means: subject colour (200, 100, 50), old background (40, 220, 150), on 0..1.
  const sides = {
    foreground: planes(3, 1, 3, (_x, _y, c) => [200, 100, 50][c]! / 255),
    background: planes(3, 1, 3, (_x, _y, c) => [40, 220, 150][c]! / 255),
  };

  it("cuts out with the edge pixel's colour cleaned and zeros where transparent", () => {
    const out = interleaved(composeImage({ rgb: source(), coefficients }, sides, { kind: "transparent" }));
    expect(out.channels).toBe(4);
    expectBytes(out.data, [200, 100, 50, 255, 200, 100, 50, 128, 0, 0, 0, 0]);
  });

  it("hands the encoder colour and alpha as one RGBA image, flattened onto white for JPEG", async () => {
    // Left half subject, right half clear, 16x8: wide enough that JPEG's 8x8 blocks keep each side's colour.
    const [width, height] = [16, 8];
    const image = () => ({ data: Uint8Array.from({ length: width * height * 3 }, (_, i) => [200, 100, 50][i % 3]!), width, height, channels: 3 as const });
    const field = planes(width, height, 4, (x, _y, c) => (c === 3 ? (x < 8 ? 1 : 0) : 0));
    const flat = (value: number) => planes(width, height, 3, () => value);
    const cut = composeImage({ rgb: image(), coefficients: field }, { foreground: flat(0.5), background: flat(0.5) }, { kind: "transparent" });
    const png = await encodeImage(cut, OutputFormat.OUTPUT_FORMAT_PNG);
    const decoded = await sharp(png.data).raw().toBuffer({ resolveWithObject: true });
    expect(decoded.info.channels).toBe(4);
    expect(new Uint8Array(decoded.data)).toEqual(interleaved(cut).data);
    const jpeg = await encodeImage(composeImage({ rgb: image(), coefficients: field }, { foreground: flat(0.5), background: flat(0.5) }, { kind: "transparent" }), OutputFormat.OUTPUT_FORMAT_JPEG);
    const flattened = await sharp(jpeg.data).raw().toBuffer({ resolveWithObject: true });
    expect(flattened.info.channels).toBe(3);
    for (let y = 0; y < height; y++) {
      for (const x of [0, 3, 12, 15]) {
        const pixel = Array.from(flattened.data.subarray((y * width + x) * 3, (y * width + x) * 3 + 3));
        const expected = x < 8 ? [200, 100, 50] : [255, 255, 255];
        pixel.forEach((value, c) => expect(Math.abs(value - expected[c]!), `pixel ${x},${y}: ${pixel}`).toBeLessThanOrEqual(12));
      }
    }
  });

  it("composes band by band as the PNG encoder reaches each band, to the same pixels as all at once", async () => {
    // Large enough for several bands (png-encoder.ts), with a soft-edged disc as the matte so every
    // kind of span (clear, opaque, edge) falls in every band.
    const [width, height] = [720, 480];
    const image = () => ({ data: Uint8Array.from({ length: width * height * 3 }, (_, i) => (i * 7 + (i >> 9)) & 255), width, height, channels: 3 as const });
    const disc = Float32Array.from({ length: width * height }, (_, p) => Math.min(1, Math.max(0, (200 - Math.hypot((p % width) - 360, Math.floor(p / width) - 240)) / 8)));
    const field = fieldOf(disc, width, height);
    const bandSides = { foreground: planes(width, height, 3, () => 0.6), background: planes(width, height, 3, () => 0.2) };
    for (const fill of [{ kind: "transparent" }, { kind: "color", red: 0, green: 0, blue: 255, alpha: 0.5 }] as const) {
      const whole = interleaved(composeImage({ rgb: image(), coefficients: field }, bandSides, fill));
      const composition = composeInBands({ rgb: image(), coefficients: field }, bandSides, fill);
      const asked: number[] = [];
      const png = await encodeImage(composition.image, OutputFormat.OUTPUT_FORMAT_PNG, {
        produceRows: (y, rows) => {
          asked.push(y);
          composition.rows(y, y + rows);
        },
      });
      expect(asked.length).toBeGreaterThan(1);
      // Compared as buffers: a deep equality over a megabyte of elements takes tens of seconds.
      const decoded = await sharp(png.data).raw().toBuffer();
      expect(decoded.length).toBe(whole.data.length);
      expect(decoded.equals(Buffer.from(whole.data.buffer, whole.data.byteOffset, whole.data.byteLength)), `${fill.kind}: the banded PNG's pixels differ`).toBe(true);
    }
    const composition = composeInBands({ rgb: image(), coefficients: field }, bandSides, { kind: "transparent" });
    expect(() => composition.rows(10, 20)).toThrow("Expected rows from 0 up to 480 to compose but received 10 to 20.");
  });

  it("puts the subject over a solid colour, opaque or translucent", () => {
    const opaque = interleaved(composeImage({ rgb: source(), coefficients }, sides, { kind: "color", red: 0, green: 0, blue: 255, alpha: 1 }));
    expect(opaque.channels).toBe(3);
    expectBytes(opaque.data, [200, 100, 50, 100, 50, 153, 0, 0, 255]);
    const translucent = interleaved(composeImage({ rgb: source(), coefficients }, sides, { kind: "color", red: 0, green: 0, blue: 255, alpha: 0.5 }));
    expect(translucent.channels).toBe(4);
    // Coverage 0.5 + 0.5 * 0.5 = 0.75; colour (0.5 * F + 0.25 * C) / 0.75.
    expectBytes(translucent.data.subarray(4, 12), [133, 67, 118, 191, 0, 0, 255, 128]);
  });

  it("puts the subject over an image, using the image's own alpha", () => {
    const image = { data: Uint8Array.from([9, 9, 9, 255, 10, 20, 30, 255, 1, 2, 3, 0]), width: 3, height: 1, channels: 4 as const };
    const out = interleaved(composeImage({ rgb: source(), coefficients }, sides, { kind: "image", image }));
    expect(out.channels).toBe(4);
    expectBytes(out.data, [200, 100, 50, 255, 105, 60, 40, 255, 1, 2, 3, 0]);
  });

  it("multiplies in the source's own transparency", () => {
    const sourceAlpha = { data: Uint8Array.from([255, 255, 0]), width: 3, height: 1, channels: 1 as const };
    const matte = composeMatte({ rgb, sourceAlpha, coefficients: fieldOf(Float32Array.from([1, 1, 1]), 3, 1) });
    expectBytes(matte.data, [255, 255, 0]);
  });

  it("blurs the background without smearing the subject's colour into it", () => {
    // Left half subject (red), right half background (blue): the weighted blur keeps the right
    // half blue up to the edge, where a plain blur would turn it purple.
    const width = 40;
    const guide = planes(width, 10, 3, (x, _y, c) => (x < 20 ? [1, 0, 0][c]! : [0, 0, 1][c]!));
    const matte = planes(width, 10, 1, (x) => (x < 20 ? 1 : 0));
    const blurred = blurredBackground(guide, matte, 4);
    const at = (x: number) => Array.from(blurred.data.subarray((5 * width + x) * 3, (5 * width + x) * 3 + 3));
    expect(at(21)[0]).toBeLessThan(0.02);
    expect(at(21)[2]).toBeGreaterThan(0.98);
  });
});
