/**
 * Euler's method on the probability-flow ODE in sigma space (Karras et al. 2022, Algorithm 2 with
 * no churn), as diffusers' `EulerDiscreteScheduler`: latents start at σ₀·noise (σ₀ = √(σ_max²+1) for
 * `leading` spacing), the UNet sees x/√(σ²+1), and each step moves x along (x − x₀)/σ to the next
 * sigma, the last being 0.
 */
import type { NoiseSchedule } from "../noise-schedule.js";
import { eulerTimesteps } from "../noise-schedule.js";
import type { TimestepSpacing } from "../scheduler-config.js";
import { checkLengths, denoisedInSigmaSpace, type GaussianSource, type Sampler } from "./sampler.js";

/** Timesteps and sigmas (with a final 0) of the Euler family for `steps` steps. */
export function eulerSigmas(schedule: NoiseSchedule, steps: number, spacing: TimestepSpacing): { timesteps: number[]; sigmas: number[] } {
  const timesteps = eulerTimesteps(spacing, steps, schedule.config);
  return { timesteps, sigmas: [...timesteps.map((t) => schedule.sigmaAt(t)), 0] };
}

/** diffusers' init_noise_sigma: σ_max for `linspace` / `trailing`, √(σ_max²+1) for `leading`. */
export function eulerInitNoiseSigma(sigmas: readonly number[], spacing: TimestepSpacing): number {
  const max = Math.max(...sigmas);
  return spacing === "leading" ? Math.sqrt(max * max + 1) : max;
}

export class EulerSampler implements Sampler {
  readonly timesteps: number[];
  readonly sigmas: number[];
  readonly initNoiseSigma: number;

  constructor(
    protected readonly schedule: NoiseSchedule,
    steps: number,
    spacing: TimestepSpacing,
  ) {
    ({ timesteps: this.timesteps, sigmas: this.sigmas } = eulerSigmas(schedule, steps, spacing));
    this.initNoiseSigma = eulerInitNoiseSigma(this.sigmas, spacing);
  }

  inputScale(step: number): number {
    const sigma = this.sigmas[step]!;
    return 1 / Math.sqrt(sigma * sigma + 1);
  }

  step(step: number, modelOutput: Float32Array, sample: Float32Array, _noise: GaussianSource): Float32Array {
    checkLengths(modelOutput, sample);
    const sigma = this.sigmas[step]!;
    const dt = this.sigmas[step + 1]! - sigma;
    const prediction = this.schedule.config.predictionType;
    const next = new Float32Array(sample.length);
    for (let i = 0; i < sample.length; i++) {
      const x = sample[i]!;
      const denoised = denoisedInSigmaSpace(prediction, x, modelOutput[i]!, sigma);
      next[i] = x + ((x - denoised) / sigma) * dt;
    }
    return next;
  }
}
