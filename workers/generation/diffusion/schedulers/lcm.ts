/**
 * Latent Consistency Model multistep sampling (Luo et al. 2023; diffusers `LCMScheduler`). The
 * distilled model was trained on `original_inference_steps` (50) timesteps k−1, 2k−1, …, N−1 with
 * k = ⌊N/50⌋; a request for n steps takes n of them, evenly spaced from the top
 * (indices ⌊linspace(0, 50, n, endpoint=false)⌋ of the reversed list: 4 steps → 999, 759, 499, 259).
 *
 * Each step predicts x₀ (VP space), applies the consistency boundary condition
 * denoised = c_out·x₀ + c_skip·x with c_skip = σ_d²/((10t)² + σ_d²), c_out = 10t/√((10t)² + σ_d²),
 * σ_d = 0.5, then re-noises to the next timestep (x = √ᾱ·denoised + √(1−ᾱ)·noise); the last step
 * returns `denoised`.
 */
import type { NoiseSchedule } from "../noise-schedule.js";
import { checkLengths, denoisedInVpSpace, type GaussianSource, type Sampler } from "./sampler.js";

/** σ_data of the consistency boundary condition. */
const SIGMA_DATA = 0.5;

export function lcmTimesteps(schedule: NoiseSchedule, steps: number): number[] {
  const { numTrainTimesteps, originalInferenceSteps } = schedule.config;
  const k = Math.floor(numTrainTimesteps / originalInferenceSteps);
  const origin = Array.from({ length: originalInferenceSteps }, (_, i) => (i + 1) * k - 1).reverse();
  if (steps > origin.length) {
    throw new RangeError(`Expected at most ${origin.length} steps for an LCM schedule but received ${steps}`);
  }
  return Array.from({ length: steps }, (_, i) => origin[Math.floor((i * origin.length) / steps)]!);
}

/** c_skip and c_out of the boundary condition at integer timestep `t`. */
export function lcmBoundary(t: number, timestepScaling: number): { cSkip: number; cOut: number } {
  const scaled = t * timestepScaling;
  const d2 = SIGMA_DATA * SIGMA_DATA;
  return { cSkip: d2 / (scaled * scaled + d2), cOut: scaled / Math.sqrt(scaled * scaled + d2) };
}

export class LcmSampler implements Sampler {
  readonly timesteps: number[];
  readonly initNoiseSigma = 1;

  constructor(
    private readonly schedule: NoiseSchedule,
    steps: number,
  ) {
    this.timesteps = lcmTimesteps(schedule, steps);
  }

  inputScale(): number {
    return 1;
  }

  step(step: number, modelOutput: Float32Array, sample: Float32Array, noise: GaussianSource): Float32Array {
    checkLengths(modelOutput, sample);
    const { predictionType, timestepScaling } = this.schedule.config;
    const t = this.timesteps[step]!;
    const alphaProd = this.schedule.alphaCumprodAt(t);
    const alpha = Math.sqrt(alphaProd);
    const sigma = Math.sqrt(1 - alphaProd);
    const { cSkip, cOut } = lcmBoundary(t, timestepScaling);
    const next = new Float32Array(sample.length);
    for (let i = 0; i < sample.length; i++) {
      const x = sample[i]!;
      next[i] = cOut * denoisedInVpSpace(predictionType, x, modelOutput[i]!, alpha, sigma) + cSkip * x;
    }
    if (step === this.timesteps.length - 1) return next;
    const prevProd = this.schedule.alphaCumprodAt(this.timesteps[step + 1]!);
    const a = Math.sqrt(prevProd);
    const s = Math.sqrt(1 - prevProd);
    for (let i = 0; i < next.length; i++) next[i] = a * next[i]! + s * noise();
    return next;
  }
}
