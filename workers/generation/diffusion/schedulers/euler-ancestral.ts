/**
 * Euler ancestral (diffusers `EulerAncestralDiscreteScheduler`): each step goes down to
 * σ_down = √(σ_to² − σ_up²) deterministically, then adds fresh noise of deviation
 * σ_up = √(σ_to²·(σ_from² − σ_to²)/σ_from²). The last step (σ_to = 0) adds none, so a single step
 * is plain Euler to x₀: that is SD-Turbo's one-step sampling at timestep 999.
 */
import { EulerSampler } from "./euler.js";
import { checkLengths, denoisedInSigmaSpace, type GaussianSource } from "./sampler.js";

/** Euler's schedule and input scaling, with fresh noise added after every step. */
export class EulerAncestralSampler extends EulerSampler {
  override step(step: number, modelOutput: Float32Array, sample: Float32Array, noise: GaussianSource): Float32Array {
    checkLengths(modelOutput, sample);
    const sigmaFrom = this.sigmas[step]!;
    const sigmaTo = this.sigmas[step + 1]!;
    const sigmaUp = Math.sqrt((sigmaTo * sigmaTo * (sigmaFrom * sigmaFrom - sigmaTo * sigmaTo)) / (sigmaFrom * sigmaFrom));
    const sigmaDown = Math.sqrt(sigmaTo * sigmaTo - sigmaUp * sigmaUp);
    const dt = sigmaDown - sigmaFrom;
    const prediction = this.schedule.config.predictionType;
    const next = new Float32Array(sample.length);
    for (let i = 0; i < sample.length; i++) {
      const x = sample[i]!;
      const denoised = denoisedInSigmaSpace(prediction, x, modelOutput[i]!, sigmaFrom);
      next[i] = x + ((x - denoised) / sigmaFrom) * dt;
    }
    if (sigmaUp > 0) for (let i = 0; i < next.length; i++) next[i] = next[i]! + noise() * sigmaUp;
    return next;
  }
}
