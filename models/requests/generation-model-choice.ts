/**
 * Which generation model answers a request. An explicit `model` must be a generation model that is
 * installed; with none, the best available one is taken: a photographic (diffusion) model first,
 * in catalog order, else the doodle model. Callers that need a photograph (background replacement)
 * pass `photographicOnly` so the doodle model is never chosen for them.
 */
import { AtelierError, modelNotInstalled } from "../../core/errors.js";
import type { CatalogEntry } from "../catalog/catalog-types.js";
import type { ModelAvailability } from "../store/model-availability.js";

export interface ModelChoiceContext {
  /** Generation models of the catalog, in preference order within each kind. */
  entries: readonly CatalogEntry[];
  models: ModelAvailability;
  /** Whether this worker has a generator for the entry (workers/generation/generator-registry.ts). */
  registry: { supports(entry: CatalogEntry): boolean };
}

export interface ModelChoiceOptions {
  /** Only models that draw photographic scenes (`photographic: true`). */
  photographicOnly?: boolean;
}

/** Installed, enabled, and runnable by this version. */
function isAvailable(entry: CatalogEntry, context: ModelChoiceContext): boolean {
  return context.models.isUsable(entry) && context.registry.supports(entry);
}

/** The best available generation model, or undefined when none is. */
export function defaultGenerationModel(context: ModelChoiceContext, options: ModelChoiceOptions = {}): CatalogEntry | undefined {
  const candidates = context.entries.filter((entry) => isAvailable(entry, context));
  return candidates.find((entry) => entry.photographic === true) ?? (options.photographicOnly ? undefined : candidates[0]);
}

/** The 503 for a server with no usable generation model: it names what to install. */
export function noGenerationModelError(context: ModelChoiceContext, options: ModelChoiceOptions = {}): AtelierError {
  const photographic = context.entries.find((entry) => entry.photographic === true);
  const doodle = context.entries.find((entry) => entry.photographic !== true);
  const diffusion = photographic ? [context.models.installable(photographic, "Stable Diffusion")] : [];
  if (options.photographicOnly) {
    return modelNotInstalled(
      `No photographic text-to-image model is installed on this server${doodle ? ` (the doodle model ${doodle.id} cannot draw photographic scenes)` : ""}.`,
      { install: diffusion, lead: "An operator installs one with" },
    );
  }
  return modelNotInstalled("No text-to-image model is installed on this server.", {
    install: [...(doodle ? [context.models.installable(doodle, "doodles")] : []), ...diffusion],
    lead: "An operator installs one with",
  });
}

/** The entry of `entries` named `requested`, installed or not; 400 listing the generation models when there is none. */
export function namedGenerationModel(requested: string, entries: readonly CatalogEntry[], options: ModelChoiceOptions = {}): CatalogEntry {
  const allowed = entries.filter((entry) => !options.photographicOnly || entry.photographic === true);
  const entry = allowed.find((candidate) => candidate.id === requested);
  if (entry) return entry;
  const ids = allowed.map((candidate) => candidate.id).join(", ");
  throw new AtelierError("INVALID_INPUT", `Unknown generation model "${requested}". Expected one of: ${ids}.`, {
    issues: [{ path: "model", message: `Expected one of ${ids} but received "${requested}".` }],
  });
}

/**
 * The entry for a request's `model` field: empty picks the default. Unknown ids answer 400 listing
 * the generation models; known ones that are not installed answer 503 naming the install command.
 */
export function chooseGenerationModel(requested: string, context: ModelChoiceContext, options: ModelChoiceOptions = {}): CatalogEntry {
  if (requested === "") {
    const chosen = defaultGenerationModel(context, options);
    if (!chosen) throw noGenerationModelError(context, options);
    return chosen;
  }
  const entry = namedGenerationModel(requested, context.entries, options);
  context.models.assertUsable(entry);
  if (!context.registry.supports(entry)) {
    throw modelNotInstalled(`The model "${entry.id}" is installed, but this version of the worker cannot run it yet.`);
  }
  return entry;
}
