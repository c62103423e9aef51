/**
 * Reproducible randomness for generation: the same 32-bit seed gives the same sequence on every
 * platform (integer arithmetic only, no Math.random), so a seed the response reports redraws the
 * same image. sfc32 (Chris Doty-Humphrey's Small Fast Counter, used by PractRand) seeded through
 * splitmix32, so neighbouring seeds (0, 1, 2, …) start from unrelated states.
 */
import { randomInt } from "node:crypto";

/** Largest seed accepted: seeds are unsigned 32-bit integers. */
export const MAX_SEED = 0xffff_ffff;

export interface SeededRandom {
  /** Uniform in [0, 1) with 32 bits of resolution. */
  uniform(): number;
  /** Standard normal (mean 0, variance 1), Box-Muller over two uniforms. */
  normal(): number;
}

/** A fresh seed for a request that gave none. */
export function randomSeed(): number {
  return randomInt(0, MAX_SEED + 1);
}

function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export function seededRandom(seed: number): SeededRandom {
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_SEED) {
    throw new RangeError(`Expected integer between 0 and ${MAX_SEED} for seed but received ${seed}`);
  }
  const init = splitmix32(seed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const next32 = (): number => {
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return t >>> 0;
  };
  // Mix the state a little before use, as the reference implementation does.
  for (let i = 0; i < 12; i++) next32();
  const uniform = () => next32() / 0x1_0000_0000;
  return {
    uniform,
    normal: () => {
      // 1 - u is in (0, 1], so the logarithm is finite.
      const radius = Math.sqrt(-2 * Math.log(1 - uniform()));
      return radius * Math.cos(2 * Math.PI * uniform());
    },
  };
}
