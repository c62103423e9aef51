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
import { ScratchPlane } from "./scratch-plane.js";

/** The 13-channel statistics plane, box-averaged in place (13.6 MB at 0.25 MP). */
const statistics = new ScratchPlane();

export interface GuidedFilterOptions {
  /** Window radius in working pixels, at least 1. */
  radius: number;
  /** Regularisation on the 0..1 colour scale (variance units); larger smooths more. */
  epsilon: number;
}

/**
 * Box-averaged coefficients `(a_r, a_g, a_b, b)` per guide pixel, 4 interleaved channels: the filtered
 * matte is `a . rgb + b` with rgb on the 0..1 scale, at this resolution or any other (sample the field).
 *
 * @param guide RGB on 0..1, 3 interleaved channels.
 * @param matte The coarse matte on 0..1, 1 channel, same size as the guide.
 */
export function guidedFilterCoefficients(guide: FloatPlanes, matte: FloatPlanes, options: GuidedFilterOptions): FloatPlanes {
  const { width, height } = guide;
  if (guide.channels !== 3 || matte.channels !== 1 || matte.width !== width || matte.height !== height) {
    throw new AtelierError(
      "INTERNAL",
      `Expected a 3-channel guide and a 1-channel matte of the same size but received ${guide.width}x${guide.height}x${guide.channels} and ${matte.width}x${matte.height}x${matte.channels}.`,
    );
  }
  const pixels = width * height;
  // Every window statistic in one 13-channel plane, so a single box pass computes them all:
  // I (3), p, I*p (3), and the upper triangle of I*I^T (rr, rg, rb, gg, gb, bb).
  const stats = statistics.take(pixels * 13);
  const g = guide.data;
  const p = matte.data;
  for (let i = 0; i < pixels; i++) {
    const r = g[i * 3]!;
    const gr = g[i * 3 + 1]!;
    const b = g[i * 3 + 2]!;
    const m = p[i]!;
    const o = i * 13;
    stats[o] = r;
    stats[o + 1] = gr;
    stats[o + 2] = b;
    stats[o + 3] = m;
    stats[o + 4] = r * m;
    stats[o + 5] = gr * m;
    stats[o + 6] = b * m;
    stats[o + 7] = r * r;
    stats[o + 8] = r * gr;
    stats[o + 9] = r * b;
    stats[o + 10] = gr * gr;
    stats[o + 11] = gr * b;
    stats[o + 12] = b * b;
  }
  const means = boxMean({ data: stats, width, height, channels: 13 }, options.radius, stats).data;
  const eps = options.epsilon;
  const coefficients = new Float32Array(pixels * 4);
  for (let i = 0; i < pixels; i++) {
    const o = i * 13;
    const mr = means[o]!;
    const mg = means[o + 1]!;
    const mb = means[o + 2]!;
    const mp = means[o + 3]!;
    const cr = means[o + 4]! - mr * mp;
    const cg = means[o + 5]! - mg * mp;
    const cb = means[o + 6]! - mb * mp;
    // Covariance of the guide plus epsilon on the diagonal: symmetric positive definite.
    const srr = means[o + 7]! - mr * mr + eps;
    const srg = means[o + 8]! - mr * mg;
    const srb = means[o + 9]! - mr * mb;
    const sgg = means[o + 10]! - mg * mg + eps;
    const sgb = means[o + 11]! - mg * mb;
    const sbb = means[o + 12]! - mb * mb + eps;
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
    const t = i * 4;
    coefficients[t] = ar;
    coefficients[t + 1] = ag;
    coefficients[t + 2] = ab;
    coefficients[t + 3] = mp - ar * mr - ag * mg - ab * mb;
  }
  return boxMean({ data: coefficients, width, height, channels: 4 }, options.radius, coefficients);
}
