/**
 * Foreground colour estimation ("decontamination"): in the transition band a pixel is a mix
 * `I = alpha F + (1 - alpha) B` of subject and old background, so keeping `I` as the cutout's colour
 * leaves a fringe of the old background around the subject (green on a green screen, sky blue in
 * hair). We estimate `F` with blur-fusion (Forte and Pitié, "Approximate Fast Foreground Colour
 * Estimation", ICIP 2021):
 *
 *   F_mean = box(alpha I) / box(alpha),  B_mean = box((1 - alpha) I) / box(1 - alpha)
 *   F = F_mean + alpha (I - alpha F_mean - (1 - alpha) B_mean)
 *
 * run twice: a wide window (local colour of each side, far from the edge), then a narrow one seeded
 * with the first estimate. Why this one rather than fast multi-level foreground estimation (Germer et
 * al. 2020, pymatting's default): its paper reports errors on the alpha-matting benchmark within a few
 * percent of the multi-level solver while being closed-form, a handful of O(pixels) box means with no
 * iterations, so it can run inside the latency budget in JavaScript; and its means are smooth fields,
 * so they are computed at the working resolution and only the last line above runs per full-resolution
 * pixel (see compose.ts), and only in the transition band, where compose reads them. The measured
 * effect is in test/background and bench/background.ts.
 */
import { AtelierError } from "../../core/errors.js";
import type { FloatPlanes } from "./box-filter.js";
import { ByteScratch, Float64Scratch, freshPlane, ScratchPlane, type Allocate } from "./scratch-plane.js";

/** Local colour means of each side of the edge, 3 interleaved channels each, on 0..1. */
export interface SideMeans {
  foreground: FloatPlanes;
  background: FloatPlanes;
}

export interface BlurFusionOptions {
  /** Box radius of the first, wide pass in working pixels (the paper's 90-pixel box is radius 45). */
  wideRadius: number;
  /** Box radius of the second, narrow pass (the paper's 6-pixel box is radius 3). */
  narrowRadius: number;
}

const TINY = 1e-5;

/** Channels of the weighted sums the wide pass reads from its summed-area table. */
const SUMS = 7;
/** The wide pass's summed-area table, `(width + 1) * (height + 1) * 7` float64 (15 MB at 0.25 MP). */
const wideSums = new Float64Scratch();
/** The wide pass's background means and first foreground estimate, 3 channels each. */
const wideBackground = new ScratchPlane();
const firstEstimate = new ScratchPlane();
/** Which pixels the narrow pass reads: the wanted ones widened by its radius. */
const reachScratch = new ByteScratch();

/**
 * The summed-area table of `alpha I` (3), `alpha`, `(1 - alpha) I` (3): entry `(y + 1, x + 1)` holds
 * the sums over the rectangle from the origin to pixel (x, y) inclusive, in float64 so that a
 * window's sum, the difference of four entries, keeps every float32 digit.
 */
function weightedSums(image: Float32Array, alpha: Float32Array, width: number, height: number): Float64Array {
  const stride = (width + 1) * SUMS;
  const table = wideSums.take((height + 1) * stride);
  table.fill(0, 0, stride);
  for (let y = 0; y < height; y++) {
    const above = y * stride;
    const row = above + stride;
    for (let c = 0; c < SUMS; c++) table[row + c] = 0;
    // Running sums along the row, one local per channel, added to the row above.
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0;
    for (let x = 0, p = y * width; x < width; x++, p++) {
      const a = alpha[p]!;
      const b = 1 - a;
      const red = image[p * 3]!;
      const green = image[p * 3 + 1]!;
      const blue = image[p * 3 + 2]!;
      s0 += a * red;
      s1 += a * green;
      s2 += a * blue;
      s3 += a;
      s4 += b * red;
      s5 += b * green;
      s6 += b * blue;
      const o = row + (x + 1) * SUMS;
      const u = o - stride;
      table[o] = table[u]! + s0;
      table[o + 1] = table[u + 1]! + s1;
      table[o + 2] = table[u + 2]! + s2;
      table[o + 3] = table[u + 3]! + s3;
      table[o + 4] = table[u + 4]! + s4;
      table[o + 5] = table[u + 5]! + s5;
      table[o + 6] = table[u + 6]! + s6;
    }
  }
  return table;
}

/** The blur-fusion update for one pixel and channel, clamped to 0..1. */
export function fuseForeground(image: number, alpha: number, foregroundMean: number, backgroundMean: number): number {
  const value = foregroundMean + alpha * (image - alpha * foregroundMean - (1 - alpha) * backgroundMean);
  return value <= 0 ? 0 : value >= 1 ? 1 : value;
}

/** `marks` widened by `radius` pixels in every direction (a square), into a reused plane. */
function widen(marks: Uint8Array, width: number, height: number, radius: number): Uint8Array {
  const out = reachScratch.take(width * height).fill(0);
  for (let y = 0; y < height; y++) {
    const top = Math.max(0, y - radius);
    const bottom = Math.min(height - 1, y + radius);
    for (let x = 0; x < width; x++) {
      if (!marks[y * width + x]) continue;
      const left = Math.max(0, x - radius);
      const right = Math.min(width - 1, x + radius) + 1;
      for (let v = top; v <= bottom; v++) out.fill(1, v * width + left, v * width + right);
    }
  }
  return out;
}

/**
 * The side means of the second blur-fusion pass, from which `fuseForeground` gives the foreground
 * colour of any pixel (at this resolution, or at full resolution with the means upsampled).
 *
 * Only the pixels marked in `wanted` get means (the others stay 0): compose.ts reads them in the
 * transition band alone, a tenth to a fifth of the working pixels (matte-field.ts,
 * `sideMeansNeeded`). So the wide pass reads a summed-area table, one pass over the image however few
 * of its windows are read; the first estimate is made only within the narrow radius of the wanted
 * pixels, and the narrow pass sums its small windows directly there.
 *
 * @param image RGB on 0..1, 3 interleaved channels.
 * @param alpha The matte on 0..1, 1 channel, same size.
 * @param wanted 1 for each pixel whose means are needed; every pixel when omitted.
 * @param allocate Where the returned planes come from.
 */
export function blurFusionMeans(image: FloatPlanes, alpha: FloatPlanes, options: BlurFusionOptions, wanted?: Uint8Array, allocate: Allocate = freshPlane): SideMeans {
  const { width, height } = image;
  if (image.channels !== 3 || alpha.channels !== 1 || alpha.width !== width || alpha.height !== height) {
    throw new AtelierError("INTERNAL", "Expected a 3-channel image and a 1-channel matte of the same size for foreground estimation.");
  }
  const pixels = width * height;
  if (wanted && wanted.length !== pixels) throw new AtelierError("INTERNAL", `Expected ${pixels} pixel marks for foreground estimation but received ${wanted.length}.`);
  const marks = wanted ?? new Uint8Array(pixels).fill(1);
  const colour = image.data;
  const matte = alpha.data;
  const table = weightedSums(colour, matte, width, height);
  const stride = (width + 1) * SUMS;
  // Wide pass: side means from the table, and the first estimate of F, wherever the narrow pass reads them.
  const reach = widen(marks, width, height, options.narrowRadius);
  const first = firstEstimate.take(pixels * 3);
  const wideB = wideBackground.take(pixels * 3);
  const wide = options.wideRadius;
  for (let y = 0; y < height; y++) {
    const top = Math.max(0, y - wide) * stride;
    const bottom = (Math.min(height - 1, y + wide) + 1) * stride;
    const rows = (bottom - top) / stride;
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      if (!reach[p]) continue;
      const left = Math.max(0, x - wide) * SUMS;
      const right = (Math.min(width - 1, x + wide) + 1) * SUMS;
      const inverse = 1 / (rows * ((right - left) / SUMS));
      // The window's corners in the table: sum = a - b - c + d.
      const a = bottom + right;
      const b = bottom + left;
      const c = top + right;
      const d = top + left;
      const meanAlpha = (table[a + 3]! - table[b + 3]! - table[c + 3]! + table[d + 3]!) * inverse;
      const toForeground = inverse / (meanAlpha + TINY);
      const toBackground = inverse / (1 - meanAlpha + TINY);
      const pixelAlpha = matte[p]!;
      for (let k = 0; k < 3; k++) {
        // Rounded to float32, as the side-means planes store them.
        const fm = Math.fround((table[a + k]! - table[b + k]! - table[c + k]! + table[d + k]!) * toForeground);
        const bm = Math.fround((table[a + 4 + k]! - table[b + 4 + k]! - table[c + 4 + k]! + table[d + 4 + k]!) * toBackground);
        wideB[p * 3 + k] = bm;
        first[p * 3 + k] = fuseForeground(colour[p * 3 + k]!, pixelAlpha, fm, bm);
      }
    }
  }
  // Narrow pass, summed directly over its small windows: alpha F (first estimate), alpha, (1 - alpha) B (wide means).
  const foreground = allocate(pixels * 3).fill(0);
  const background = allocate(pixels * 3).fill(0);
  const narrow = options.narrowRadius;
  for (let y = 0; y < height; y++) {
    const top = Math.max(0, y - narrow);
    const bottom = Math.min(height - 1, y + narrow);
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      if (!marks[p]) continue;
      const left = Math.max(0, x - narrow);
      const right = Math.min(width - 1, x + narrow);
      let f0 = 0, f1 = 0, f2 = 0, sumAlpha = 0, b0 = 0, b1 = 0, b2 = 0;
      for (let v = top; v <= bottom; v++) {
        for (let q = v * width + left, end = v * width + right; q <= end; q++) {
          const a = matte[q]!;
          const o = q * 3;
          f0 += a * first[o]!;
          f1 += a * first[o + 1]!;
          f2 += a * first[o + 2]!;
          sumAlpha += a;
          b0 += (1 - a) * wideB[o]!;
          b1 += (1 - a) * wideB[o + 1]!;
          b2 += (1 - a) * wideB[o + 2]!;
        }
      }
      const inverse = 1 / ((bottom - top + 1) * (right - left + 1));
      const meanAlpha = sumAlpha * inverse;
      const toForeground = inverse / (meanAlpha + TINY);
      const toBackground = inverse / (1 - meanAlpha + TINY);
      foreground[p * 3] = f0 * toForeground;
      foreground[p * 3 + 1] = f1 * toForeground;
      foreground[p * 3 + 2] = f2 * toForeground;
      background[p * 3] = b0 * toBackground;
      background[p * 3 + 1] = b1 * toBackground;
      background[p * 3 + 2] = b2 * toBackground;
    }
  }
  return {
    foreground: { data: foreground, width, height, channels: 3 },
    background: { data: background, width, height, channels: 3 },
  };
}
