/**
 * Per-model defaults of a diffusion catalog record (`details.diffusion`): the sampler, steps and
 * guidance a request gets when it names none, and tokenizer facts the export may not carry.
 */
import type { CatalogEntry } from "../../../models/catalog/catalog-types.js";
import { samplerSpec } from "./schedulers/sampler-registry.js";
import { LIMITS } from "../../../core/limits.js";

export interface DiffusionSettings {
  /** Sampler name (see SAMPLERS), e.g. `dpmpp-2m-karras`, `turbo`, `lcm`. */
  scheduler: string;
  /** Denoising steps by default, 1..the sampler's maximum. */
  steps: number;
  /** Classifier-free guidance scale by default, 0..30; at most 1 means no unconditional pass. */
  guidanceScale: number;
  /** Pad token when the export's tokenizer config does not say (SD 2.x: `"!"`). */
  padToken?: string;
}

/** Largest guidance scale accepted. */
export const MAX_GUIDANCE_SCALE = LIMITS.guidanceScale.max;

export const FALLBACK_SETTINGS: DiffusionSettings = { scheduler: "dpmpp-2m-karras", steps: 25, guidanceScale: 7.5 };

/** The record's `details.diffusion`, checked; a bad record is a programming error and throws. */
export function diffusionSettings(entry: CatalogEntry): DiffusionSettings {
  const raw = (entry.details?.diffusion ?? {}) as Partial<Record<keyof DiffusionSettings, unknown>>;
  const settings: DiffusionSettings = {
    scheduler: typeof raw.scheduler === "string" ? raw.scheduler : FALLBACK_SETTINGS.scheduler,
    steps: typeof raw.steps === "number" ? raw.steps : FALLBACK_SETTINGS.steps,
    guidanceScale: typeof raw.guidanceScale === "number" ? raw.guidanceScale : FALLBACK_SETTINGS.guidanceScale,
  };
  if (typeof raw.padToken === "string") settings.padToken = raw.padToken;
  const spec = samplerSpec(settings.scheduler);
  if (!spec) throw new Error(`${entry.id}: details.diffusion.scheduler "${settings.scheduler}" is not a known sampler`);
  if (!Number.isInteger(settings.steps) || settings.steps < 1 || settings.steps > spec.maxSteps) {
    throw new Error(`${entry.id}: details.diffusion.steps must be an integer between 1 and ${spec.maxSteps}`);
  }
  if (!(settings.guidanceScale >= 0 && settings.guidanceScale <= MAX_GUIDANCE_SCALE)) {
    throw new Error(`${entry.id}: details.diffusion.guidanceScale must be between 0 and ${MAX_GUIDANCE_SCALE}`);
  }
  return settings;
}
