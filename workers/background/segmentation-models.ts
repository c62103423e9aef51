/**
 * The segmentation networks background removal runs. The catalog record says how to feed each one
 * (input size, tensor names and layout, normalisation); this registry adds what only this task
 * needs: which output channel is the foreground, how the input is resized, how much working memory a
 * session keeps, and which model is preferred when the client names none.
 */
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";

/** What a model finds: any salient subject, or people only (catalog `details.subjects`). */
export type Subjects = "any" | "people";

export interface SegmentationSpec {
  /** Catalog id. */
  id: string;
  /** Channel of the output tensor that holds the foreground probability (0..1). */
  maskChannel: number;
  /**
   * Peak activation memory of one run at the network's fixed-size input, in MiB, counted against the
   * model memory budget on top of the runtime's estimate for the weights until a run has been
   * measured. ISNet's arena keeps it between runs (its catalog entry says why; the session is
   * released when idle); the portrait models take a few MiB.
   */
  workingMiB: number;
  /**
   * How the image is resized to the network's input: bilinear for ISNet, as IMG.LY's reference
   * pipeline does (and half the time of Lanczos on a 1 MP photo); Lanczos for the people models, which
   * score higher with it on the composites of bench/background.ts (with bilinear input the selfie
   * model's mean IoU falls from 0.90 to 0.88 on the people and from 0.89 to 0.87 on the objects).
   */
  inputKernel: "linear" | "lanczos3";
  /**
   * Its own matte tells whether a person is in the picture (person-evidence.ts), so a request that
   * names no model runs it first and keeps its result where it finds one (choose-model.ts).
   */
  detectsPeople?: true;
}

/**
 * Best first; the default is the first usable general model, else the first usable people model.
 * On the person composites of bench/background.ts the two people models are close (mean IoU 0.90
 * selfie, 0.89 SINet), each failing on a different backdrop; the selfie model goes first because
 * MediaPipe trained it on varied scenes, while SINet's weights were trained on head-and-shoulders
 * portraits only.
 */
export const SEGMENTATION_MODELS: readonly SegmentationSpec[] = [
  { id: "isnet-general", maskChannel: 0, workingMiB: 900, inputKernel: "linear" },
  { id: "portrait-selfie", maskChannel: 0, workingMiB: 16, inputKernel: "lanczos3", detectsPeople: true },
  { id: "portrait-sinet", maskChannel: 1, workingMiB: 16, inputKernel: "lanczos3" },
];

export function subjectsOf(entry: CatalogEntry): Subjects {
  return entry.details?.subjects === "people" ? "people" : "any";
}

/** The catalog record of a registered model (the registry and the catalog are checked against each other by the tests). */
export function segmentationEntry(spec: SegmentationSpec): CatalogEntry {
  const entry = catalogEntry(spec.id);
  if (!entry || entry.task !== "background-remove") throw new Error(`Segmentation model ${spec.id} is not a background-remove catalog entry.`);
  return entry;
}
