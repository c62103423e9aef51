/**
 * Edge-aware refinement of a coarse matte: the colour guided filter (He, Sun and Tang, "Guided Image
 * Filtering", TPAMI 2013), run the "fast guided filter" way (He and Sun 2015): the linear
 * coefficients are solved at a working resolution and only their smooth, box-averaged field is
 * carried to full resolution, where `alpha = a . I + b` is evaluated against the full-resolution
 * colours. The edge then follows the photograph's own edge at full resolution, although every window
 * statistic was computed on at most the working-resolution pixel count.
 *
 * In each window the matte is modelled as a linear function of the guide's RGB. Where the window
 * straddles a colour edge the fit snaps the matte's soft ramp (a 256x256 model's edge is several
 * full-resolution pixels wide) onto that edge; where the colours on both sides are alike (`epsilon`
 * dominates the covariance) the filter falls back to smoothing, so no texture is invented.
 */
import { AtelierError } from "../../core/errors.js";
import { boxMean, type FloatPlanes } from "./box-filter.js";
import { freshPlane, ScratchPlane, type Allocate } from "./scratch-plane.js";

/** The 4-channel plane of the matte's statistics (p, I*p), box-averaged in place (4.2 MB at 0.25 MP). */
const matteStatistics = new ScratchPlane();

export interface GuidedFilterOptions {
  /** Window radius in working pixels, at least 1. */
  radius: number;
  /** Regularisation on the 0..1 colour scale (variance units); larger smooths more. */
  epsilon: number;
}

/**
 * The window means of the guide's own statistics, I (3) and the upper triangle of I*I^T (rr, rg, rb,
 * gg, gb, bb), 9 interleaved channels. They do not depend on the matte, so the caller can compute
 * them while the network still runs.
 */
export interface GuideStatistics {
  means: FloatPlanes;
  radius: number;
}

/** {@link GuideStatistics} of `guide` (RGB on 0..1, 3 interleaved channels) for windows of `radius`. */
export function guideStatistics(guide: FloatPlanes, radius: number, allocate: Allocate = freshPlane): GuideStatistics {
  if (guide.channels !== 3) throw new AtelierError("INTERNAL", `Expected a 3-channel guide but received ${guide.channels} channels.`);
  const pixels = guide.width * guide.height;
  const stats = allocate(pixels * 9);
  const g = guide.data;
  for (let i = 0; i < pixels; i++) {
    const r = g[i * 3]!;
    const gr = g[i * 3 + 1]!;
    const b = g[i * 3 + 2]!;
    const o = i * 9;
    stats[o] = r;
    stats[o + 1] = gr;
    stats[o + 2] = b;
    stats[o + 3] = r * r;
    stats[o + 4] = r * gr;
    stats[o + 5] = r * b;
    stats[o + 6] = gr * gr;
    stats[o + 7] = gr * b;
    stats[o + 8] = b * b;
  }
  return { means: boxMean({ data: stats, width: guide.width, height: guide.height, channels: 9 }, radius, stats), radius };
}

/**
 * Box-averaged coefficients `(a_r, a_g, a_b, b)` per guide pixel, 4 interleaved channels: the filtered
 * matte is `a . rgb + b` with rgb on the 0..1 scale, at this resolution or any other (sample the field).
 *
 * @param guide RGB on 0..1, 3 interleaved channels.
 * @param matte The coarse matte on 0..1, 1 channel, same size as the guide.
 * @param statistics The guide's own window means for `options.radius`, when already computed.
 * @param allocate Where the returned field (and statistics made here) come from.
 */
export function guidedFilterCoefficients(
  guide: FloatPlanes,
  matte: FloatPlanes,
  options: GuidedFilterOptions,
  statistics?: GuideStatistics,
  allocate: Allocate = freshPlane,
): FloatPlanes {
  const { width, height } = guide;
  if (guide.channels !== 3 || matte.channels !== 1 || matte.width !== width || matte.height !== height) {
    throw new AtelierError(
      "INTERNAL",
      `Expected a 3-channel guide and a 1-channel matte of the same size but received ${guide.width}x${guide.height}x${guide.channels} and ${matte.width}x${matte.height}x${matte.channels}.`,
    );
  }
  const own = statistics && statistics.radius === options.radius && statistics.means.width === width && statistics.means.height === height;
  const guideMeans = (own ? statistics : guideStatistics(guide, options.radius, allocate)).means.data;
  const pixels = width * height;
  // The matte's window statistics, p and I*p, in one 4-channel plane so a single box pass computes them.
  const stats = matteStatistics.take(pixels * 4);
  const g = guide.data;
  const p = matte.data;
  for (let i = 0; i < pixels; i++) {
    const m = p[i]!;
    const o = i * 4;
    stats[o] = m;
    stats[o + 1] = g[i * 3]! * m;
    stats[o + 2] = g[i * 3 + 1]! * m;
    stats[o + 3] = g[i * 3 + 2]! * m;
  }
  const means = boxMean({ data: stats, width, height, channels: 4 }, options.radius, stats).data;
  const eps = options.epsilon;
  const coefficients = allocate(pixels * 4);
  for (let i = 0; i < pixels; i++) {
    const o = i * 4;
    const q = i * 9;
    const mr = guideMeans[q]!;
    const mg = guideMeans[q + 1]!;
    const mb = guideMeans[q + 2]!;
    const mp = means[o]!;
    const cr = means[o + 1]! - mr * mp;
    const cg = means[o + 2]! - mg * mp;
    const cb = means[o + 3]! - mb * mp;
    // Covariance of the guide plus epsilon on the diagonal: symmetric positive definite.
    const srr = guideMeans[q + 3]! - mr * mr + eps;
    const srg = guideMeans[q + 4]! - mr * mg;
    const srb = guideMeans[q + 5]! - mr * mb;
    const sgg = guideMeans[q + 6]! - mg * mg + eps;
    const sgb = guideMeans[q + 7]! - mg * mb;
    const sbb = guideMeans[q + 8]! - mb * mb + eps;
    // Inverse by cofactors (the matrix is symmetric, so is its inverse).
    const irr = sgg * sbb - sgb * sgb;
    const irg = srb * sgb - srg * sbb;
    const irb = srg * sgb - srb * sgg;
    const igg = srr * sbb - srb * srb;
    const igb = srb * srg - srr * sgb;
    const ibb = srr * sgg - srg * srg;
    const det = srr * irr + srg * irg + srb * irb;
    const ar = (irr * cr + irg * cg + irb * cb) / det;
    const ag = (irg * cr + igg * cg + igb * cb) / det;
    const ab = (irb * cr + igb * cg + ibb * cb) / det;
    coefficients[o] = ar;
    coefficients[o + 1] = ag;
    coefficients[o + 2] = ab;
    coefficients[o + 3] = mp - ar * mr - ag * mg - ab * mb;
  }
  return boxMean({ data: coefficients, width, height, channels: 4 }, options.radius, coefficients);
}
