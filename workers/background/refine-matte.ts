/**
 * From the network's coarse matte to a field that gives the matte at any resolution: the coarse matte
 * is stretched to the working resolution and refined there by the colour guided filter (see
 * guided-filter.ts); the result is the filter's coefficient field, evaluated per full-resolution
 * pixel against that pixel's colour in compose.ts. The matte's tails are clipped in the same field.
 */
import type { FloatPlanes } from "./box-filter.js";
import { resampleBilinear } from "./bilinear.js";
import { guidedFilterCoefficients, type GuideStatistics } from "./guided-filter.js";
import { freshPlane, type Allocate } from "./scratch-plane.js";

export interface RefineOptions {
  /**
   * "guided" (default): edge-aware, the matte's edge snaps to the image's. "bilinear": the coarse matte
   * only resampled (kept for comparisons in bench/background.ts).
   */
  method?: "guided" | "bilinear";
  /** Window radius in working pixels; default from how much the network's matte is enlarged. */
  radius?: number;
  /** Guided-filter regularisation on the 0..1 colour scale; default {@link DEFAULT_EPSILON}. */
  epsilon?: number;
}

export interface RefinedMatte {
  /** `(a_r, a_g, a_b, b)` per working pixel: matte = a . rgb + b, rgb on 0..1. */
  coefficients: FloatPlanes;
  /** The refined matte at the working resolution, 0..1. */
  alpha: FloatPlanes;
}

/**
 * Variance of colour (0..1 scale) below which a window counts as flat: 3e-4 is a standard deviation
 * of about 4/255, the noise floor of 8-bit and JPEG photographs. Much smaller lets noise and texture
 * into the matte; larger keeps the network's blur at edges of low contrast. (bench/background.ts:
 * 1e-4 to 1e-3 differ by under 1 % in edge error; all beat plain resampling.)
 */
export const DEFAULT_EPSILON = 3e-4;

/**
 * The matte's tails clipped: values within 4 % of 0 or 1 become 0 or 1. The linear fit leaves a
 * residue of a few percent on flat regions whose colour varies inside a window (texture near an
 * edge), seen as a faint ghost of the old background or a slightly see-through subject; clipping it
 * lowers the total error on every ground-truth image of bench/background.ts.
 */
export const MATTE_LEVELS: [number, number] = [0.04, 0.96];

/**
 * Window radius for a network matte enlarged `enlargement` times: the window must span the matte's
 * soft ramp (about 1.5 network pixels either side of its edge) to snap it onto the image's edge.
 */
export function defaultRadius(enlargement: number): number {
  return Math.min(24, Math.max(3, Math.round(2 * enlargement + 2)));
}

/** Maps [low, high] to [0, 1] in the field itself: the matte is linear in the coefficients. */
function applyLevels(coefficients: FloatPlanes, [low, high]: [number, number]): void {
  const gain = 1 / (high - low);
  const data = coefficients.data;
  for (let i = 0; i < data.length; i += 4) {
    data[i] = data[i]! * gain;
    data[i + 1] = data[i + 1]! * gain;
    data[i + 2] = data[i + 2]! * gain;
    data[i + 3] = (data[i + 3]! - low) * gain;
  }
}

/** The window radius `refineMatte` uses for a coarse matte of `coarseWidth` x `coarseHeight` refined at the guide's size. */
export function refineRadius(guide: { width: number; height: number }, coarseWidth: number, coarseHeight: number, options: RefineOptions = {}): number {
  return options.radius ?? defaultRadius(Math.max(guide.width / coarseWidth, guide.height / coarseHeight));
}

/**
 * @param statistics The guide's own window means (guided-filter.ts), when computed beforehand; used
 *   only when made for the radius this refinement takes.
 * @param allocate Where the returned planes come from.
 */
export function refineMatte(coarse: FloatPlanes, guide: FloatPlanes, options: RefineOptions = {}, statistics?: GuideStatistics, allocate: Allocate = freshPlane): RefinedMatte {
  const { width, height } = guide;
  const matte = coarse.width === width && coarse.height === height ? coarse : resampleBilinear(coarse, width, height);
  const pixels = width * height;
  let coefficients: FloatPlanes;
  if (options.method === "bilinear") {
    coefficients = { data: new Float32Array(pixels * 4), width, height, channels: 4 };
    for (let i = 0; i < pixels; i++) coefficients.data[i * 4 + 3] = matte.data[i]!;
  } else {
    const filter = { radius: refineRadius(guide, coarse.width, coarse.height, options), epsilon: options.epsilon ?? DEFAULT_EPSILON };
    coefficients = guidedFilterCoefficients(guide, matte, filter, statistics, allocate);
  }
  applyLevels(coefficients, MATTE_LEVELS);
  const alpha = allocate(pixels);
  const c = coefficients.data;
  const g = guide.data;
  for (let i = 0; i < pixels; i++) {
    const value = c[i * 4]! * g[i * 3]! + c[i * 4 + 1]! * g[i * 3 + 1]! + c[i * 4 + 2]! * g[i * 3 + 2]! + c[i * 4 + 3]!;
    alpha[i] = value <= 0 ? 0 : value >= 1 ? 1 : value;
  }
  return { coefficients, alpha: { data: alpha, width, height, channels: 1 } };
}
