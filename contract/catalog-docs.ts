/**
 * What the procedure descriptions say about models, read from the model catalog, so a model added
 * to the catalog is documented without an edit here. Only the catalog's declarative entries are
 * imported: no model runtime, no onnxruntime, nothing that loads weights.
 */
import { entriesForTask, type CatalogEntry } from "../models/catalog/model-catalog.js";

function scalesOf(entry: CatalogEntry): string {
  if (!entry.upscale) return "";
  const { nativeScales, supportedScales } = entry.upscale;
  return ` (scales ${Math.min(...supportedScales)} to ${Math.max(...supportedScales)}; native x${nativeScales.join(", x")})`;
}

const subjects = (entry: CatalogEntry) => (entry.details?.subjects === "people" ? "people only" : "any subject");

/** `` `espcn-x3` (scales 2 to 6; native x3), … `` for the upscale `model` field. */
export function upscaleModelsText(): string {
  return entriesForTask("upscale").map((entry) => `\`${entry.id}\`${scalesOf(entry)}`).join(", ");
}

/** Every style id, for the style-transfer `style` field. */
export function styleIds(): string[] {
  return entriesForTask("style-transfer").map((entry) => entry.id);
}

/** `` `isnet-general` (any subject), `portrait-selfie` (people only) `` for the background `model` field. */
export function backgroundModelsText(): string {
  return entriesForTask("background-remove").map((entry) => `\`${entry.id}\` (${subjects(entry)})`).join(", ");
}

/** Generation model ids, for the generate `model` field. */
export function generationModelsText(): string {
  return entriesForTask("generate").map((entry) => `\`${entry.id}\`${entry.photographic ? " (photographic)" : ""}`).join(", ");
}
