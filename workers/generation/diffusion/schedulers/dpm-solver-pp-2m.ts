/**
 * DPM-Solver++ (2M): the second-order multistep solver of Lu et al. (2022) on the data prediction,
 * as diffusers' `DPMSolverMultistepScheduler(algorithm_type="dpmsolver++", solver_order=2,
 * solver_type="midpoint", final_sigmas_type="zero")`, optionally with Karras sigmas.
 *
 * Latents live in variance-preserving space (x = α·x₀ + s·ε with α = 1/√(σ²+1), s = σ·α), so the
 * initial noise has deviation 1 and the UNet input is not rescaled. With λ = log(α/s) and
 * h = λ_t − λ_s, the first-order update is x_t = (s_t/s_s)·x − α_t·(e^(−h) − 1)·D₀, and the
 * second-order one adds −½·α_t·(e^(−h) − 1)·D₁ with D₁ = (D₀ − D₋₁)·h/h₀. The first step and the last
 * (to σ = 0) are first order.
 *
 * Karras sigmas span the full training range (σ(0) … σ(N−1)) and their timesteps are rounded
 * log-sigma interpolations; without Karras, timesteps follow `timestep_spacing` over n + 1 points.
 */
import { linspace, roundHalfEven, sigmaToTimestep, karrasSigmas, type NoiseSchedule } from "../noise-schedule.js";
import type { TimestepSpacing } from "../scheduler-config.js";
import { checkLengths, denoisedInVpSpace, type GaussianSource, type Sampler } from "./sampler.js";

/** DPM-Solver's own spacing rules (they differ from Euler's by using n + 1 points). */
export function dpmSolverTimesteps(spacing: TimestepSpacing, steps: number, schedule: NoiseSchedule): number[] {
  const n = schedule.config.numTrainTimesteps;
  switch (spacing) {
    case "linspace":
      return linspace(0, n - 1, steps + 1).map(roundHalfEven).reverse().slice(0, steps);
    case "leading": {
      const ratio = Math.floor(n / (steps + 1));
      return Array.from({ length: steps + 1 }, (_, i) => roundHalfEven(i * ratio)).reverse().slice(0, steps).map((t) => t + schedule.config.stepsOffset);
    }
    case "trailing": {
      const ratio = n / steps;
      return Array.from({ length: steps }, (_, i) => roundHalfEven(n - i * ratio) - 1);
    }
  }
}

function alphaSigma(sigma: number): { alpha: number; sigma: number; lambda: number } {
  const alpha = 1 / Math.sqrt(sigma * sigma + 1);
  const s = sigma * alpha;
  return { alpha, sigma: s, lambda: Math.log(alpha) - Math.log(s) };
}

export class DpmSolverPlusPlus2MSampler implements Sampler {
  readonly timesteps: number[];
  /** One sigma per step plus the final 0. */
  readonly sigmas: number[];
  readonly initNoiseSigma = 1;
  private previous: Float32Array | undefined;

  constructor(
    private readonly schedule: NoiseSchedule,
    steps: number,
    spacing: TimestepSpacing,
    karras: boolean,
  ) {
    if (karras) {
      const all = schedule.sigmas;
      const sigmas = karrasSigmas(all[0]!, all[all.length - 1]!, steps);
      this.timesteps = sigmas.map((sigma) => roundHalfEven(sigmaToTimestep(sigma, all, schedule.logSigmas)));
      this.sigmas = [...sigmas, 0];
    } else {
      this.timesteps = dpmSolverTimesteps(spacing, steps, schedule);
      this.sigmas = [...this.timesteps.map((t) => schedule.sigmaAt(t)), 0];
    }
  }

  inputScale(): number {
    return 1;
  }

  step(step: number, modelOutput: Float32Array, sample: Float32Array, _noise: GaussianSource): Float32Array {
    checkLengths(modelOutput, sample);
    const prediction = this.schedule.config.predictionType;
    const s0 = alphaSigma(this.sigmas[step]!);
    const t = alphaSigma(this.sigmas[step + 1]!);
    // Data prediction D₀ = x₀ estimate at this step.
    const denoised = new Float32Array(sample.length);
    for (let i = 0; i < sample.length; i++) denoised[i] = denoisedInVpSpace(prediction, sample[i]!, modelOutput[i]!, s0.alpha, s0.sigma);

    const last = step === this.timesteps.length - 1;
    const h = t.lambda - s0.lambda; // +∞ on the final step to σ = 0, where e^(−h) = 0
    const ratio = t.sigma / s0.sigma;
    const first = t.alpha * (Math.exp(-h) - 1);
    const next = new Float32Array(sample.length);
    if (this.previous === undefined || last) {
      for (let i = 0; i < sample.length; i++) next[i] = ratio * sample[i]! - first * denoised[i]!;
    } else {
      const s1 = alphaSigma(this.sigmas[step - 1]!);
      const r0 = (s0.lambda - s1.lambda) / h;
      const previous = this.previous;
      for (let i = 0; i < sample.length; i++) {
        const d0 = denoised[i]!;
        const d1 = (d0 - previous[i]!) / r0;
        next[i] = ratio * sample[i]! - first * d0 - 0.5 * first * d1;
      }
    }
    this.previous = denoised;
    return next;
  }
}
