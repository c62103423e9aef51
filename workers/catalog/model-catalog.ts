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

/** Total size of a model's weight files in bytes. */
export function weightSize(entry: CatalogEntry): number {
  return entry.source.kind === "builtin" ? 0 : entry.source.files.reduce((sum, file) => sum + file.size, 0);
}

/**
 * Files a model needs whose checksums are not pinned (graphs of published exports nobody has hashed
 * for this catalog, and files listed in `details.unpinnedFiles`). Such a model cannot be pulled:
 * nothing could verify what arrives.
 */
export function unpinnedFiles(entry: CatalogEntry): string[] {
  if (entry.source.kind !== "files") return [];
  const known = new Set([...entry.source.files.map((file) => file.name), ...(entry.source.conversions ?? []).map((conversion) => conversion.output)]);
  const graphFiles = Object.values(entry.graphs).flatMap((graph) =>
    "onnx" in graph ? [graph.onnx, ...(graph.externalData ?? [])] : "chunks" in graph ? graph.chunks : [],
  );
  const listed = entry.details?.unpinnedFiles;
  const listedNames = Array.isArray(listed) ? (listed as { name: string }[]).map((file) => file.name) : [];
  return [...new Set([...graphFiles, ...listedNames])].filter((name) => !known.has(name));
}
