/**
 * The samplers a request may name (`scheduler`), each a small spec: what it is, whether it uses
 * classifier-free guidance, the spacing it falls back to when the model's scheduler config names
 * none (diffusers' class default), and how to build it for n steps.
 */
import type { NoiseSchedule } from "../noise-schedule.js";
import type { TimestepSpacing } from "../scheduler-config.js";
import { DpmSolverPlusPlus2MSampler } from "./dpm-solver-pp-2m.js";
import { EulerAncestralSampler } from "./euler-ancestral.js";
import { EulerSampler } from "./euler.js";
import { LcmSampler } from "./lcm.js";
import type { Sampler } from "./sampler.js";

export interface SamplerSpec {
  name: string;
  description: string;
  /** False for samplers of distilled models that are run without an unconditional pass (SD-Turbo). */
  classifierFree: boolean;
  /** Most steps this sampler accepts. */
  maxSteps: number;
  create(schedule: NoiseSchedule, steps: number): Sampler;
}

const spacing = (schedule: NoiseSchedule, fallback: TimestepSpacing): TimestepSpacing => schedule.config.timestepSpacing ?? fallback;

/** Most denoising steps any sampler runs: beyond this no SD sampler improves. */
export const MAX_STEPS = 150;

export const SAMPLERS: readonly SamplerSpec[] = [
  {
    name: "euler",
    description: "Euler (Karras et al. 2022), deterministic",
    classifierFree: true,
    maxSteps: MAX_STEPS,
    create: (schedule, steps) => new EulerSampler(schedule, steps, spacing(schedule, "linspace")),
  },
  {
    name: "euler-ancestral",
    description: "Euler ancestral: Euler with fresh noise each step",
    classifierFree: true,
    maxSteps: MAX_STEPS,
    create: (schedule, steps) => new EulerAncestralSampler(schedule, steps, spacing(schedule, "linspace")),
  },
  {
    name: "dpmpp-2m-karras",
    description: "DPM-Solver++ 2M with Karras sigmas: good images in 20-30 steps",
    classifierFree: true,
    maxSteps: MAX_STEPS,
    create: (schedule, steps) => new DpmSolverPlusPlus2MSampler(schedule, steps, spacing(schedule, "linspace"), true),
  },
  {
    name: "dpmpp-2m",
    description: "DPM-Solver++ 2M on the model's own timestep spacing",
    classifierFree: true,
    maxSteps: MAX_STEPS,
    create: (schedule, steps) => new DpmSolverPlusPlus2MSampler(schedule, steps, spacing(schedule, "linspace"), false),
  },
  {
    name: "lcm",
    description: "Latent Consistency Model sampling, 2-8 steps (LCM models and LCM-LoRA merges)",
    classifierFree: true,
    maxSteps: 50,
    create: (schedule, steps) => new LcmSampler(schedule, steps),
  },
  {
    name: "turbo",
    description: "SD-Turbo: Euler ancestral on trailing timesteps (one step at t = 999), no guidance",
    classifierFree: false,
    maxSteps: 4,
    create: (schedule, steps) => new EulerAncestralSampler(schedule, steps, "trailing"),
  },
];

const BY_NAME = new Map(SAMPLERS.map((spec) => [spec.name, spec]));

export function samplerSpec(name: string): SamplerSpec | undefined {
  return BY_NAME.get(name);
}

export const SAMPLER_NAMES: readonly string[] = SAMPLERS.map((spec) => spec.name);
