/**
 * Each sampler's update rule: with an oracle UNet (one that knows the clean latents) every sampler
 * ends exactly at them, for epsilon and v-prediction; DPM-Solver++ 2M agrees with k-diffusion's
 * independent formulation (`sample_dpmpp_2m`, in sigma space) on an arbitrary model; the LCM
 * boundary condition and the guidance embedding follow their formulas.
 */
import { describe, expect, it } from "vitest";
import { classifierFreeGuidance, guidanceScaleEmbedding } from "../../../workers/generation/diffusion/guidance.js";
import { NoiseSchedule } from "../../../workers/generation/diffusion/noise-schedule.js";
import { DEFAULT_SCHEDULE, type PredictionType } from "../../../workers/generation/diffusion/scheduler-config.js";
import { DpmSolverPlusPlus2MSampler } from "../../../workers/generation/diffusion/schedulers/dpm-solver-pp-2m.js";
import { EulerAncestralSampler } from "../../../workers/generation/diffusion/schedulers/euler-ancestral.js";
import { EulerSampler } from "../../../workers/generation/diffusion/schedulers/euler.js";
import { lcmBoundary, LcmSampler } from "../../../workers/generation/diffusion/schedulers/lcm.js";
import { SAMPLERS, samplerSpec } from "../../../workers/generation/diffusion/schedulers/sampler-registry.js";
import type { Sampler } from "../../../workers/generation/diffusion/schedulers/sampler.js";
import { seededRandom } from "../../../core/seeded-random.js";

const CLEAN = Float32Array.of(0.5, -1, 2, 0, -0.25, 1.5);

function schedule(prediction: PredictionType = "epsilon"): NoiseSchedule {
  return new NoiseSchedule({ ...DEFAULT_SCHEDULE, predictionType: prediction, stepsOffset: 1 });
}

/** Where a sampler's latents stand at `step`: x = a·x₀ + b·ε, and v = α·ε − s·x₀ in VP terms. */
type Frame = (step: number) => { a: number; b: number; alpha: number; s: number };

const sigmaFrame = (sigmas: readonly number[]): Frame => (step) => {
  const sigma = sigmas[step]!;
  const alpha = 1 / Math.sqrt(sigma * sigma + 1);
  return { a: 1, b: sigma, alpha, s: sigma * alpha };
};
const vpFrame = (alphaBar: (step: number) => number): Frame => (step) => {
  const alpha = Math.sqrt(alphaBar(step));
  const s = Math.sqrt(1 - alphaBar(step));
  return { a: alpha, b: s, alpha, s };
};

/** Runs a sampler with a UNet that knows the clean latents; returns the final latents. */
function runOracle(sampler: Sampler, frame: Frame, prediction: PredictionType, seed = 7): Float32Array {
  const random = seededRandom(seed);
  const noise = () => random.normal();
  let x: Float32Array = Float32Array.from(CLEAN, () => noise() * sampler.initNoiseSigma);
  for (let step = 0; step < sampler.timesteps.length; step++) {
    const { a, b, alpha, s } = frame(step);
    const output = new Float32Array(x.length);
    for (let i = 0; i < x.length; i++) {
      const epsilon = (x[i]! - a * CLEAN[i]!) / b;
      output[i] = prediction === "epsilon" ? epsilon : prediction === "v_prediction" ? alpha * epsilon - s * CLEAN[i]! : CLEAN[i]!;
    }
    x = sampler.step(step, output, x, noise);
  }
  return x;
}

function maxError(x: Float32Array): number {
  return Math.max(...Array.from(x, (value, i) => Math.abs(value - CLEAN[i]!)));
}

describe("samplers with an oracle UNet end at the clean latents", () => {
  for (const prediction of ["epsilon", "v_prediction", "sample"] as const) {
    const sched = schedule(prediction);
    it(`Euler (${prediction})`, () => {
      const sampler = new EulerSampler(sched, 10, "linspace");
      expect(maxError(runOracle(sampler, sigmaFrame(sampler.sigmas), prediction))).toBeLessThan(1e-5);
    });
    it(`Euler ancestral (${prediction})`, () => {
      const sampler = new EulerAncestralSampler(sched, 10, "leading");
      expect(maxError(runOracle(sampler, sigmaFrame(sampler.sigmas), prediction))).toBeLessThan(1e-5);
    });
    it(`DPM-Solver++ 2M Karras (${prediction})`, () => {
      const sampler = new DpmSolverPlusPlus2MSampler(sched, 12, "linspace", true);
      const frame: Frame = (step) => {
        const sigma = sampler.sigmas[step]!;
        return vpFrame(() => 1 / (sigma * sigma + 1))(step);
      };
      expect(maxError(runOracle(sampler, frame, prediction))).toBeLessThan(1e-5);
    });
    it(`LCM (${prediction})`, () => {
      const sampler = new LcmSampler(sched, 4);
      const frame = vpFrame((step) => sched.alphaCumprodAt(sampler.timesteps[step]!));
      // The boundary condition keeps c_skip·x at the last timestep (259): about 4e-9 of x.
      expect(maxError(runOracle(sampler, frame, prediction))).toBeLessThan(1e-5);
    });
  }

  it("SD-Turbo: one Euler step from t = 999 with σmax noise", () => {
    const sampler = samplerSpec("turbo")!.create(schedule(), 1) as EulerAncestralSampler;
    expect(sampler.timesteps).toEqual([999]);
    expect(sampler.initNoiseSigma).toBeCloseTo(14.6146, 4);
    expect(maxError(runOracle(sampler, sigmaFrame(sampler.sigmas), "epsilon"))).toBeLessThan(1e-5);
  });
});

describe("DPM-Solver++ 2M against k-diffusion's sample_dpmpp_2m", () => {
  // An arbitrary smooth "UNet": ε depends on the scaled input and the timestep.
  const model = (input: Float32Array, t: number) => Float32Array.from(input, (v, i) => 0.6 * v + 0.3 * Math.sin(t / 100 + i));

  function kDiffusion(sigmas: readonly number[], timesteps: readonly number[], start: Float32Array): Float64Array {
    // Sigma (variance-exploding) space: x = x₀ + σ·ε; the UNet sees x/√(σ²+1).
    let x = Float64Array.from(start, (v) => v * Math.sqrt(sigmas[0]! ** 2 + 1));
    let old: Float64Array | undefined;
    const tFn = (sigma: number) => -Math.log(sigma);
    for (let i = 0; i < timesteps.length; i++) {
      const sigma = sigmas[i]!;
      const next = sigmas[i + 1]!;
      const eps = model(Float32Array.from(x, (v) => v / Math.sqrt(sigma * sigma + 1)), timesteps[i]!);
      const denoised = Float64Array.from(x, (v, k) => v - sigma * eps[k]!);
      const t = tFn(sigma);
      const tNext = tFn(next);
      const h = tNext - t;
      if (old === undefined || next === 0) {
        x = Float64Array.from(x, (v, k) => (next / sigma) * v + -Math.expm1(-h) * denoised[k]!);
      } else {
        const r = (t - tFn(sigmas[i - 1]!)) / h;
        x = Float64Array.from(x, (v, k) => (next / sigma) * v + -Math.expm1(-h) * ((1 + 1 / (2 * r)) * denoised[k]! - (1 / (2 * r)) * old![k]!));
      }
      old = denoised;
    }
    return x;
  }

  it.each([true, false])("agrees (Karras sigmas: %s)", (karras) => {
    const sampler = new DpmSolverPlusPlus2MSampler(schedule(), 8, "linspace", karras);
    const random = seededRandom(3);
    const start = Float32Array.from({ length: 16 }, () => random.normal());
    let x: Float32Array = start.slice();
    for (let step = 0; step < sampler.timesteps.length; step++) x = sampler.step(step, model(x, sampler.timesteps[step]!), x, () => 0);
    const reference = kDiffusion(sampler.sigmas, sampler.timesteps, start);
    for (let i = 0; i < x.length; i++) expect(x[i]).toBeCloseTo(reference[i]!, 4);
  });
});

describe("LCM and guidance formulas", () => {
  it("boundary condition: c_skip = σd²/((10t)² + σd²), c_out = 10t/√((10t)² + σd²)", () => {
    const { cSkip, cOut } = lcmBoundary(999, 10);
    expect(cSkip).toBeCloseTo(0.25 / (9990 ** 2 + 0.25), 20);
    expect(cOut).toBeCloseTo(9990 / Math.sqrt(9990 ** 2 + 0.25), 15);
    expect(lcmBoundary(0, 10)).toEqual({ cSkip: 1, cOut: 0 });
  });

  it("guidance scale embedding: [sin(w·f), cos(w·f)] with w = (g − 1)·1000 and f from 1 down to 1e-4", () => {
    const embedding = guidanceScaleEmbedding(8, 256);
    expect(embedding).toHaveLength(256);
    expect(embedding[0]).toBeCloseTo(Math.sin(7000), 6);
    expect(embedding[128]).toBeCloseTo(Math.cos(7000), 6);
    expect(embedding[127]).toBeCloseTo(Math.sin(0.7), 5);
    expect(embedding[255]).toBeCloseTo(Math.cos(0.7), 5);
    expect(guidanceScaleEmbedding(1, 8)).toEqual(Float32Array.of(0, 0, 0, 0, 1, 1, 1, 1));
  });

  it("classifier-free guidance: ε_u + g·(ε_c − ε_u)", () => {
    const guided = classifierFreeGuidance(Float32Array.of(1, 2), Float32Array.of(3, 0), 7.5);
    expect([...guided]).toEqual([1 + 7.5 * 2, 2 + 7.5 * -2]);
  });

  it("every registered sampler builds the number of steps asked for", () => {
    for (const spec of SAMPLERS) {
      const steps = Math.min(4, spec.maxSteps);
      expect(spec.create(schedule(), steps).timesteps, spec.name).toHaveLength(steps);
    }
  });
});
