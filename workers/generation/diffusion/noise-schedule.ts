/**
 * The discrete noise schedule shared by every sampler, in float64 from the published formulas
 * (diffusers' `EulerDiscreteScheduler` / `DPMSolverMultistepScheduler`):
 *
 * - betas: `linear` = linspace(beta_start, beta_end, N); `scaled_linear` = linspace(√beta_start,
 *   √beta_end, N)²;
 * - alphas_cumprod[t] = ∏_{s≤t} (1 − beta_s);
 * - sigma(t) = √((1 − alphas_cumprod[t]) / alphas_cumprod[t]), the noise-to-signal ratio;
 * - inference timesteps by spacing (`linspace`, `leading`, `trailing`), sigmas interpolated
 *   linearly in t between the training ones;
 * - Karras et al. (2022) sigmas: (σ_max^(1/ρ) + i/(n−1)·(σ_min^(1/ρ) − σ_max^(1/ρ)))^ρ, ρ = 7, mapped
 *   back to (fractional) timesteps by interpolating log-sigma.
 */
import type { ScheduleConfig, TimestepSpacing } from "./scheduler-config.js";

/** ρ of Karras et al.'s sigma schedule. */
export const KARRAS_RHO = 7;

/** `count` evenly spaced values from `start` to `end` inclusive (numpy.linspace). */
export function linspace(start: number, end: number, count: number): number[] {
  if (count === 1) return [start];
  const step = (end - start) / (count - 1);
  return Array.from({ length: count }, (_, i) => (i === count - 1 ? end : start + step * i));
}

/** numpy's round: halves to even, as `np.round` does. */
export function roundHalfEven(value: number): number {
  const floor = Math.floor(value);
  const diff = value - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

export function betas(config: ScheduleConfig): number[] {
  const n = config.numTrainTimesteps;
  if (config.betaSchedule === "linear") return linspace(config.betaStart, config.betaEnd, n);
  return linspace(Math.sqrt(config.betaStart), Math.sqrt(config.betaEnd), n).map((b) => b * b);
}

export function alphasCumprod(config: ScheduleConfig): Float64Array {
  const out = new Float64Array(config.numTrainTimesteps);
  let product = 1;
  betas(config).forEach((beta, t) => {
    product *= 1 - beta;
    out[t] = product;
  });
  return out;
}

/** sigma(t) for every training timestep t. */
export function trainingSigmas(alphas: Float64Array): Float64Array {
  return alphas.map((a) => Math.sqrt((1 - a) / a));
}

/**
 * Inference timesteps, highest first, for the Euler family (diffusers `EulerDiscreteScheduler`):
 * `linspace` = linspace(0, N−1, n) reversed (fractional); `leading` = round(i·⌊N/n⌋) reversed, plus
 * steps_offset; `trailing` = round(N − i·N/n) − 1.
 */
export function eulerTimesteps(spacing: TimestepSpacing, steps: number, config: ScheduleConfig): number[] {
  const n = config.numTrainTimesteps;
  switch (spacing) {
    case "linspace":
      return linspace(0, n - 1, steps).reverse();
    case "leading": {
      const ratio = Math.floor(n / steps);
      return Array.from({ length: steps }, (_, i) => roundHalfEven(i * ratio) + config.stepsOffset).reverse();
    }
    case "trailing": {
      const ratio = n / steps;
      return Array.from({ length: steps }, (_, i) => roundHalfEven(n - i * ratio) - 1);
    }
  }
}

/** numpy.interp over the integer grid 0..len−1 (clamped at both ends). */
export function interpolate(x: number, values: ArrayLike<number>): number {
  if (x <= 0) return values[0]!;
  const last = values.length - 1;
  if (x >= last) return values[last]!;
  const low = Math.floor(x);
  const w = x - low;
  return values[low]! * (1 - w) + values[low + 1]! * w;
}

/** Karras et al.'s sigmas from `sigmaMax` down to `sigmaMin`, `steps` of them. */
export function karrasSigmas(sigmaMin: number, sigmaMax: number, steps: number, rho = KARRAS_RHO): number[] {
  const minInv = sigmaMin ** (1 / rho);
  const maxInv = sigmaMax ** (1 / rho);
  return linspace(0, 1, steps).map((ramp) => (maxInv + ramp * (minInv - maxInv)) ** rho);
}

/**
 * The (fractional) timestep whose sigma is `sigma`, interpolating linearly in log-sigma between the
 * two neighbouring training timesteps (diffusers `_sigma_to_t`).
 */
export function sigmaToTimestep(sigma: number, sigmas: Float64Array, logs: ArrayLike<number> = sigmas.map(Math.log)): number {
  const logSigma = Math.log(Math.max(sigma, 1e-10));
  // Last index whose log-sigma is at or below the target, kept below the end so a pair exists.
  let low = 0;
  for (let i = 0; i < logs.length; i++) if (logSigma - logs[i]! >= 0) low = i;
  low = Math.min(low, logs.length - 2);
  const high = low + 1;
  let w = (logs[low]! - logSigma) / (logs[low]! - logs[high]!);
  w = Math.min(1, Math.max(0, w));
  return (1 - w) * low + w * high;
}

/** The schedule of one model, computed once. */
export class NoiseSchedule {
  readonly alphasCumprod: Float64Array;
  readonly sigmas: Float64Array;
  readonly logSigmas: Float64Array;

  constructor(readonly config: ScheduleConfig) {
    this.alphasCumprod = alphasCumprod(config);
    this.sigmas = trainingSigmas(this.alphasCumprod);
    this.logSigmas = this.sigmas.map(Math.log);
  }

  /** sigma at a fractional timestep (linear interpolation between training timesteps). */
  sigmaAt(timestep: number): number {
    return interpolate(timestep, this.sigmas);
  }

  /** alphas_cumprod at an integer timestep. */
  alphaCumprodAt(timestep: number): number {
    const value = this.alphasCumprod[timestep];
    if (value === undefined) throw new RangeError(`timestep ${timestep} is outside 0..${this.alphasCumprod.length - 1}`);
    return value;
  }
}
