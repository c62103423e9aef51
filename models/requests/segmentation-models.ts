/**
 * The segmentation networks background removal runs: the background-remove entries of the catalog
 * with their `segmentation` settings (which output channel is the foreground, how the input is
 * resized, how much working memory a session keeps).
 */
import type { CatalogEntry, SegmentationSettings } from "../catalog/catalog-types.js";
import { catalogEntry, entriesForTask } from "../catalog/model-catalog.js";

/** What a model finds: any salient subject, or people only (catalog `details.subjects`). */
export type Subjects = "any" | "people";

export interface SegmentationSpec extends SegmentationSettings {
  /** Catalog id. */
  id: string;
}

/**
 * Best first, in catalog order; the default is the first usable general model, else the first usable
 * people model. On the person composites of bench/background.ts the two people models are close
 * (mean IoU 0.90 selfie, 0.89 SINet), each failing on a different backdrop; the selfie model goes
 * first because MediaPipe trained it on varied scenes, while SINet's weights were trained on
 * head-and-shoulders portraits only.
 */
export const SEGMENTATION_MODELS: readonly SegmentationSpec[] = entriesForTask("background-remove").flatMap((entry) =>
  entry.segmentation ? [{ id: entry.id, ...entry.segmentation }] : [],
);

export function subjectsOf(entry: CatalogEntry): Subjects {
  return entry.details?.subjects === "people" ? "people" : "any";
}

/** The catalog record of a registered model (the registry and the catalog are checked against each other by the tests). */
export function segmentationEntry(spec: SegmentationSpec): CatalogEntry {
  const entry = catalogEntry(spec.id);
  if (!entry || entry.task !== "background-remove") throw new Error(`Segmentation model ${spec.id} is not a background-remove catalog entry.`);
  return entry;
}
