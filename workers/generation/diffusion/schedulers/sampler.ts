/**
 * What the denoising loop needs from a sampler. A sampler is made for one request (its number of
 * steps), keeps whatever history its method needs (DPM-Solver's previous prediction), and works on
 * latents as Float32Array while doing each element's arithmetic in float64.
 */
import type { PredictionType } from "../scheduler-config.js";

/** Draws one standard normal sample; the pipeline's seeded generator. */
export type GaussianSource = () => number;

export interface Sampler {
  /** Timestep fed to the UNet at each step, highest first; fractional for some schedules (integer exports truncate). */
  readonly timesteps: readonly number[];
  /** Standard deviation of the initial latents (unit gaussian noise is multiplied by it). */
  readonly initNoiseSigma: number;
  /** Factor the latents are multiplied by before the UNet sees them at `step` (0-based). */
  inputScale(step: number): number;
  /**
   * The latents after `step` (0-based), from the latents before it and the (guided) UNet output;
   * `noise` is called for the fresh noise ancestral and consistency samplers add.
   */
  step(step: number, modelOutput: Float32Array, sample: Float32Array, noise: GaussianSource): Float32Array;
}

/**
 * The denoised estimate x₀ from a UNet output in sigma (variance-exploding) space, where
 * x = x₀ + σ·ε: `epsilon` x₀ = x − σ·out; `v_prediction` x₀ = out·(−σ/√(σ²+1)) + x/(σ²+1);
 * `sample` x₀ = out.
 */
export function denoisedInSigmaSpace(prediction: PredictionType, sample: number, output: number, sigma: number): number {
  switch (prediction) {
    case "epsilon":
      return sample - sigma * output;
    case "v_prediction":
      return output * (-sigma / Math.sqrt(sigma * sigma + 1)) + sample / (sigma * sigma + 1);
    case "sample":
      return output;
  }
}

/**
 * x₀ in variance-preserving space, where x = α·x₀ + s·ε with α = √ᾱ, s = √(1−ᾱ): `epsilon`
 * x₀ = (x − s·out)/α; `v_prediction` x₀ = α·x − s·out; `sample` x₀ = out.
 */
export function denoisedInVpSpace(prediction: PredictionType, sample: number, output: number, alpha: number, sigma: number): number {
  switch (prediction) {
    case "epsilon":
      return (sample - sigma * output) / alpha;
    case "v_prediction":
      return alpha * sample - sigma * output;
    case "sample":
      return output;
  }
}

export function checkLengths(modelOutput: Float32Array, sample: Float32Array): void {
  if (modelOutput.length !== sample.length) {
    throw new Error(`sampler: model output has ${modelOutput.length} values but the latents ${sample.length}`);
  }
}
