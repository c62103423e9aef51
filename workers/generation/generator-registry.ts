/**
 * Which code draws for which catalog entry: each model family registers a predicate on catalog
 * entries and a factory. The generation service asks the registry for the entry it chose, so a new
 * family is one registration here plus its catalog records, and tests can register a fake family
 * for a fake entry without touching production code.
 */
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import type { WorkerContext } from "../worker-context.js";
import { createDiffusionGenerator } from "./diffusion/diffusion-generator.js";
import { createDoodleGenerator } from "./doodle/doodle-generator.js";
import type { ImageGenerator } from "./image-generator.js";

export interface GeneratorRegistration {
  /** Short name of the model family, for logs and errors. */
  family: string;
  /** Whether this family draws for `entry`. */
  matches(entry: CatalogEntry): boolean;
  /** Called once per entry and worker; the generator is kept for the worker's lifetime. */
  create(entry: CatalogEntry, context: WorkerContext): ImageGenerator;
}

export class GeneratorRegistry {
  private readonly registrations: GeneratorRegistration[] = [];

  /** Adds a family; earlier registrations win when several match one entry. */
  register(registration: GeneratorRegistration): this {
    this.registrations.push(registration);
    return this;
  }

  registrationFor(entry: CatalogEntry): GeneratorRegistration | undefined {
    return this.registrations.find((registration) => registration.matches(entry));
  }

  supports(entry: CatalogEntry): boolean {
    return this.registrationFor(entry) !== undefined;
  }
}

/** The Quick, Draw! doodle decoder (cvae-quickdraw). */
export const DOODLE_GENERATOR: GeneratorRegistration = {
  family: "quickdraw-doodle",
  matches: (entry) => entry.id === "cvae-quickdraw",
  create: createDoodleGenerator,
};

/** Catalog records of Stable Diffusion exports (models/catalog/entries/diffusion-models.ts). */
export function isStableDiffusion(entry: CatalogEntry): boolean {
  return entry.task === "generate" && entry.details?.family === "stable-diffusion";
}

/** Stable Diffusion ONNX exports (SD 1.x, 2.x, Turbo, LCM): workers/generation/diffusion/. */
export const DIFFUSION_GENERATOR: GeneratorRegistration = {
  family: "stable-diffusion",
  matches: isStableDiffusion,
  create: createDiffusionGenerator,
};

/** The families this version can run. */
export function defaultGeneratorRegistry(): GeneratorRegistry {
  return new GeneratorRegistry().register(DOODLE_GENERATOR).register(DIFFUSION_GENERATOR);
}
