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
 * pixel (see compose.ts). The measured effect is in test/background and bench/background.ts.
 */
import { AtelierError } from "../../core/errors.js";
import { boxMean, type FloatPlanes } from "./box-filter.js";
import { ScratchPlane } from "./scratch-plane.js";

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

/** Planes used only inside `blurFusionMeans`: the weighted box input and the wide pass's results. */
const weightedScratch = new ScratchPlane();
const wideForeground = new ScratchPlane();
const wideBackground = new ScratchPlane();
const firstEstimate = new ScratchPlane();

/**
 * One blur-fusion pass: side means from the current foreground and background estimates, written
 * into `fg` and `bg` (3 channels each).
 */
function sideMeans(
  foreground: Float32Array,
  background: Float32Array,
  alpha: Float32Array,
  width: number,
  height: number,
  radius: number,
  fg: Float32Array,
  bg: Float32Array,
): SideMeans {
  const pixels = width * height;
  // alpha F (3), alpha, (1 - alpha) B (3): one 7-channel box pass; box(1 - alpha) is 1 - box(alpha).
  const weighted = weightedScratch.take(pixels * 7);
  for (let i = 0; i < pixels; i++) {
    const a = alpha[i]!;
    const o = i * 7;
    const f = i * 3;
    weighted[o] = a * foreground[f]!;
    weighted[o + 1] = a * foreground[f + 1]!;
    weighted[o + 2] = a * foreground[f + 2]!;
    weighted[o + 3] = a;
    weighted[o + 4] = (1 - a) * background[f]!;
    weighted[o + 5] = (1 - a) * background[f + 1]!;
    weighted[o + 6] = (1 - a) * background[f + 2]!;
  }
  const means = boxMean({ data: weighted, width, height, channels: 7 }, radius, weighted).data;
  for (let i = 0; i < pixels; i++) {
    const o = i * 7;
    const a = means[o + 3]!;
    const f = 1 / (a + TINY);
    const b = 1 / (1 - a + TINY);
    for (let c = 0; c < 3; c++) {
      fg[i * 3 + c] = means[o + c]! * f;
      bg[i * 3 + c] = means[o + 4 + c]! * b;
    }
  }
  return {
    foreground: { data: fg, width, height, channels: 3 },
    background: { data: bg, width, height, channels: 3 },
  };
}

/** The blur-fusion update for one pixel and channel, clamped to 0..1. */
export function fuseForeground(image: number, alpha: number, foregroundMean: number, backgroundMean: number): number {
  const value = foregroundMean + alpha * (image - alpha * foregroundMean - (1 - alpha) * backgroundMean);
  return value <= 0 ? 0 : value >= 1 ? 1 : value;
}

/**
 * The side means of the second blur-fusion pass, from which `fuseForeground` gives the foreground
 * colour of any pixel (at this resolution, or at full resolution with the means upsampled).
 *
 * @param image RGB on 0..1, 3 interleaved channels.
 * @param alpha The matte on 0..1, 1 channel, same size.
 */
export function blurFusionMeans(image: FloatPlanes, alpha: FloatPlanes, options: BlurFusionOptions): SideMeans {
  const { width, height } = image;
  if (image.channels !== 3 || alpha.channels !== 1 || alpha.width !== width || alpha.height !== height) {
    throw new AtelierError("INTERNAL", "Expected a 3-channel image and a 1-channel matte of the same size for foreground estimation.");
  }
  const pixels = width * height;
  const wide = sideMeans(image.data, image.data, alpha.data, width, height, options.wideRadius, wideForeground.take(pixels * 3), wideBackground.take(pixels * 3));
  // First estimate of F everywhere, then the narrow pass refines the means around each edge pixel.
  const first = firstEstimate.take(pixels * 3);
  const fm = wide.foreground.data;
  const bm = wide.background.data;
  for (let i = 0; i < pixels; i++) {
    const a = alpha.data[i]!;
    for (let c = 0; c < 3; c++) first[i * 3 + c] = fuseForeground(image.data[i * 3 + c]!, a, fm[i * 3 + c]!, bm[i * 3 + c]!);
  }
  return sideMeans(first, bm, alpha.data, width, height, options.narrowRadius, new Float32Array(pixels * 3), new Float32Array(pixels * 3));
}
