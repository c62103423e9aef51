/**
 * Classifier-free guidance (Ho & Salimans 2022) and the guidance embedding of LCM's distilled UNets.
 */

/** ε = ε_uncond + g·(ε_cond − ε_uncond), element-wise, into a new array. */
export function classifierFreeGuidance(unconditional: Float32Array, conditional: Float32Array, scale: number): Float32Array {
  if (unconditional.length !== conditional.length) throw new Error("guidance: the two predictions differ in size");
  const out = new Float32Array(conditional.length);
  for (let i = 0; i < out.length; i++) out[i] = unconditional[i]! + scale * (conditional[i]! - unconditional[i]!);
  return out;
}

/**
 * The sinusoidal embedding of the guidance scale an LCM UNet takes as `timestep_cond`
 * (diffusers `get_guidance_scale_embedding`): w = (g − 1)·1000, frequencies
 * exp(−i·ln(10000)/(d/2 − 1)) for i < d/2, then [sin(w·f), cos(w·f)], zero-padded to odd `dim`.
 */
export function guidanceScaleEmbedding(guidanceScale: number, dim: number): Float32Array {
  if (!Number.isInteger(dim) || dim < 4) throw new RangeError(`Expected integer of at least 4 for the guidance embedding size but received ${dim}`);
  const w = (guidanceScale - 1) * 1000;
  const half = Math.floor(dim / 2);
  const step = Math.log(10000) / (half - 1);
  const out = new Float32Array(dim);
  for (let i = 0; i < half; i++) {
    // Reference computes in float32: the frequency and the product are rounded to float32 first.
    const frequency = Math.fround(Math.exp(-i * Math.fround(step)));
    const angle = Math.fround(w * frequency);
    out[i] = Math.sin(angle);
    out[half + i] = Math.cos(angle);
  }
  return out;
}
