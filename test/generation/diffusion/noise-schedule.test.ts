/**
 * The noise schedule and timestep spacings against values computed here, in float64, straight from
 * the published formulas (Ho et al. 2020 betas, the "scaled_linear" schedule of Stable Diffusion,
 * Karras et al. 2022 sigmas), plus literal values known from the reference implementations.
 */
import { describe, expect, it } from "vitest";
import {
  alphasCumprod,
  betas,
  eulerTimesteps,
  karrasSigmas,
  NoiseSchedule,
  roundHalfEven,
  sigmaToTimestep,
} from "../../../workers/generation/diffusion/noise-schedule.js";
import { DEFAULT_SCHEDULE, parseScheduleConfig, type ScheduleConfig } from "../../../workers/generation/diffusion/scheduler-config.js";
import { dpmSolverTimesteps, DpmSolverPlusPlus2MSampler } from "../../../workers/generation/diffusion/schedulers/dpm-solver-pp-2m.js";
import { EulerSampler } from "../../../workers/generation/diffusion/schedulers/euler.js";
import { lcmTimesteps } from "../../../workers/generation/diffusion/schedulers/lcm.js";

const N = 1000;
const SD = DEFAULT_SCHEDULE;

/** β_i = (√β₀ + i/(N−1)·(√β₁ − √β₀))², written out independently of the implementation. */
function referenceBeta(i: number, b0 = 0.00085, b1 = 0.012): number {
  const root = Math.sqrt(b0) + (i / (N - 1)) * (Math.sqrt(b1) - Math.sqrt(b0));
  return root * root;
}

function referenceAlphasCumprod(): number[] {
  const out: number[] = [];
  let product = 1;
  for (let i = 0; i < N; i++) {
    product *= 1 - referenceBeta(i);
    out.push(product);
  }
  return out;
}

const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-300);

describe("training schedule (scaled_linear, 0.00085 to 0.012, 1000 steps)", () => {
  const schedule = new NoiseSchedule(SD);
  const expected = referenceAlphasCumprod();

  it("has the published end points", () => {
    const b = betas(SD);
    expect(b).toHaveLength(1000);
    expect(b[0]).toBeCloseTo(0.00085, 15);
    expect(b[999]).toBeCloseTo(0.012, 15);
    expect(schedule.alphasCumprod[0]).toBeCloseTo(1 - 0.00085, 15);
    expect(schedule.alphasCumprod[1]).toBeCloseTo((1 - 0.00085) * (1 - referenceBeta(1)), 15);
    // SD's sigma range as k-diffusion reports it: sigma_min 0.0292, sigma_max 14.6146.
    expect(schedule.sigmas[0]).toBeCloseTo(0.0292, 4);
    expect(schedule.sigmas[999]).toBeCloseTo(14.6146, 4);
    expect(schedule.alphasCumprod[999]).toBeCloseTo(1 / (14.6146 ** 2 + 1), 6);
  });

  it("matches the formulas at every timestep", () => {
    let worst = 0;
    for (let t = 0; t < N; t++) {
      worst = Math.max(worst, relative(schedule.alphasCumprod[t]!, expected[t]!));
      const sigma = Math.sqrt((1 - expected[t]!) / expected[t]!);
      worst = Math.max(worst, relative(schedule.sigmas[t]!, sigma));
    }
    expect(worst).toBeLessThan(1e-12);
  });

  it("supports the linear beta schedule", () => {
    const linear: ScheduleConfig = { ...SD, betaSchedule: "linear", betaStart: 0.0001, betaEnd: 0.02 };
    const b = betas(linear);
    expect(b[0]).toBeCloseTo(0.0001, 15);
    expect(b[500]).toBeCloseTo(0.0001 + (500 / 999) * (0.02 - 0.0001), 15);
    expect(alphasCumprod(linear)[0]).toBeCloseTo(0.9999, 15);
  });

  it("interpolates sigma linearly between training timesteps and inverts it in log space", () => {
    expect(schedule.sigmaAt(10.25)).toBeCloseTo(schedule.sigmas[10]! * 0.75 + schedule.sigmas[11]! * 0.25, 14);
    for (const t of [0, 1, 17, 500, 998, 999]) expect(sigmaToTimestep(schedule.sigmas[t]!, schedule.sigmas)).toBeCloseTo(t, 9);
    // Between two timesteps, the fraction is the log-sigma one.
    const mid = Math.exp((Math.log(schedule.sigmas[100]!) + Math.log(schedule.sigmas[101]!)) / 2);
    expect(sigmaToTimestep(mid, schedule.sigmas)).toBeCloseTo(100.5, 9);
    // Outside the range it clamps.
    expect(sigmaToTimestep(100, schedule.sigmas)).toBe(999);
    expect(sigmaToTimestep(1e-6, schedule.sigmas)).toBe(0);
  });
});

describe("timestep spacing", () => {
  const leadingConfig: ScheduleConfig = { ...SD, stepsOffset: 1 };

  it("rounds halves to even like numpy", () => {
    expect([0.5, 1.5, 2.5, -0.5, 2.4, 2.6].map(roundHalfEven)).toEqual([0, 2, 2, 0, 2, 3]);
  });

  it("leading: every ⌊1000/n⌋ from 0, reversed, plus steps_offset (SD 1.5: 981, 961, …, 1 for 50 steps)", () => {
    const timesteps = eulerTimesteps("leading", 50, leadingConfig);
    expect(timesteps).toEqual(Array.from({ length: 50 }, (_, i) => 981 - 20 * i));
    expect(eulerTimesteps("leading", 4, SD)).toEqual([750, 500, 250, 0]);
  });

  it("trailing: from 999 down by 1000/n (SD-Turbo's single step is 999)", () => {
    expect(eulerTimesteps("trailing", 1, SD)).toEqual([999]);
    expect(eulerTimesteps("trailing", 4, SD)).toEqual([999, 749, 499, 249]);
    expect(eulerTimesteps("trailing", 3, SD)).toEqual([999, 666, 332]);
  });

  it("linspace: evenly from 999 to 0, fractional", () => {
    expect(eulerTimesteps("linspace", 4, SD)).toEqual([999, 666, 333, 0]);
    const t25 = eulerTimesteps("linspace", 25, SD);
    expect(t25[0]).toBe(999);
    expect(t25[1]).toBeCloseTo(999 - 999 / 24, 12);
    expect(t25[24]).toBe(0);
  });

  it("DPM-Solver's own spacings use n + 1 points", () => {
    expect(dpmSolverTimesteps("linspace", 4, new NoiseSchedule(SD))).toEqual([999, 749, 500, 250]);
    expect(dpmSolverTimesteps("leading", 4, new NoiseSchedule(leadingConfig))).toEqual([801, 601, 401, 201]);
    expect(dpmSolverTimesteps("trailing", 4, new NoiseSchedule(SD))).toEqual([999, 749, 499, 249]);
  });

  it("LCM picks from the 50-step distilled schedule 999, 979, …, 19", () => {
    const schedule = new NoiseSchedule(SD);
    expect(lcmTimesteps(schedule, 1)).toEqual([999]);
    expect(lcmTimesteps(schedule, 2)).toEqual([999, 499]);
    expect(lcmTimesteps(schedule, 4)).toEqual([999, 759, 499, 259]);
    expect(lcmTimesteps(schedule, 8)).toEqual([999, 879, 759, 639, 499, 379, 259, 139]);
    expect(lcmTimesteps(schedule, 50)).toEqual(Array.from({ length: 50 }, (_, i) => 999 - 20 * i));
    expect(() => lcmTimesteps(schedule, 51)).toThrow(/at most 50 steps/);
  });
});

describe("sigmas of the samplers", () => {
  const schedule = new NoiseSchedule(SD);

  it("Karras sigmas: (σmax^(1/7) + i/(n−1)·(σmin^(1/7) − σmax^(1/7)))^7", () => {
    const sigmaMin = 0.0292;
    const sigmaMax = 14.6146;
    const got = karrasSigmas(sigmaMin, sigmaMax, 10);
    for (let i = 0; i < 10; i++) {
      const expected = (sigmaMax ** (1 / 7) + (i / 9) * (sigmaMin ** (1 / 7) - sigmaMax ** (1 / 7))) ** 7;
      expect(relative(got[i]!, expected)).toBeLessThan(1e-13);
    }
    expect(got[0]).toBeCloseTo(sigmaMax, 12);
    expect(got[9]).toBeCloseTo(sigmaMin, 12);
  });

  it("DPM-Solver++ 2M Karras spans the whole training range and ends at 0", () => {
    const sampler = new DpmSolverPlusPlus2MSampler(schedule, 20, "linspace", true);
    expect(sampler.sigmas).toHaveLength(21);
    expect(sampler.sigmas[0]).toBeCloseTo(schedule.sigmas[999]!, 12);
    expect(sampler.sigmas[19]).toBeCloseTo(schedule.sigmas[0]!, 12);
    expect(sampler.sigmas[20]).toBe(0);
    expect(sampler.timesteps[0]).toBe(999);
    expect(sampler.timesteps[19]).toBe(0);
    expect(sampler.timesteps.every((t, i) => i === 0 || t <= sampler.timesteps[i - 1]!)).toBe(true);
    expect(sampler.initNoiseSigma).toBe(1);
  });

  it("Euler: sigmas at the timesteps then 0; initial sigma σmax (linspace, trailing) or √(σmax²+1) (leading)", () => {
    const linspace = new EulerSampler(schedule, 4, "linspace");
    expect(linspace.sigmas).toEqual([schedule.sigmas[999], schedule.sigmas[666], schedule.sigmas[333], schedule.sigmas[0], 0]);
    expect(linspace.initNoiseSigma).toBeCloseTo(14.6146, 4);
    expect(linspace.inputScale(0)).toBeCloseTo(1 / Math.sqrt(schedule.sigmas[999]! ** 2 + 1), 14);
    const leading = new EulerSampler(new NoiseSchedule({ ...SD, stepsOffset: 1 }), 50, "leading");
    expect(leading.timesteps[0]).toBe(981);
    expect(leading.initNoiseSigma).toBeCloseTo(Math.sqrt(schedule.sigmas[981]! ** 2 + 1), 12);
  });
});

describe("scheduler_config.json", () => {
  it("reads SD 1.5's PNDM config (leading left to the sampler) and SD-Turbo's trailing Euler config", () => {
    const sd15 = parseScheduleConfig({
      _class_name: "PNDMScheduler",
      beta_end: 0.012,
      beta_schedule: "scaled_linear",
      beta_start: 0.00085,
      num_train_timesteps: 1000,
      set_alpha_to_one: false,
      skip_prk_steps: true,
      steps_offset: 1,
      trained_betas: null,
    });
    expect(sd15).toEqual({ ...SD, stepsOffset: 1 });
    const turbo = parseScheduleConfig({ timestep_spacing: "trailing", prediction_type: "epsilon" });
    expect(turbo.timestepSpacing).toBe("trailing");
    expect(parseScheduleConfig({ prediction_type: "v_prediction" }).predictionType).toBe("v_prediction");
  });

  it.each([
    [{ beta_schedule: "squaredcos_cap_v2" }, /beta_schedule/],
    [{ prediction_type: "flow" }, /prediction_type/],
    [{ num_train_timesteps: 1.5 }, /num_train_timesteps/],
    [{ rescale_betas_zero_snr: true }, /zero-SNR/],
  ])("refuses %j", (config, message) => {
    expect(() => parseScheduleConfig(config)).toThrow(message);
  });
});
