/** Numeric helpers for comparing converted models with their references. */
import { seededRandom } from "../../core/seeded-random.js";

/** Largest |a[i] - b[i]|; throws when the lengths differ (a layout or shape mistake). */
export function maxAbsDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length mismatch: ${a.length} vs ${b.length}`);
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    // NaN must fail a comparison, not vanish in Math.max.
    if (Number.isNaN(d)) return Number.NaN;
    if (d > max) max = d;
  }
  return max;
}

/** Largest |a[i]|, to put differences in proportion. */
export function maxAbs(a: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]!));
  return max;
}

/** Deterministic uniform [0, 1) generator (the project's seeded generator), so failures reproduce. */
export function seededUniformGenerator(seed: number): () => number {
  return seededRandom(seed).uniform;
}

/** `count` seeded uniform values in [lo, hi). */
export function seededUniform(seed: number, count: number, lo = 0, hi = 1): Float32Array {
  const next = seededRandom(seed).uniform;
  return Float32Array.from({ length: count }, () => lo + (hi - lo) * next());
}
