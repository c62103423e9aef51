/**
 * Which segmentation model serves a request: the one named (400 if unknown, 503 naming the install
 * command if not installed); else, where both a general model and the people model that detects
 * people are usable, the picture decides (choose-per-image.ts: the people model where it finds a
 * person, whose matte there is as good as the general model's in a fraction of its time, else the
 * general model); else the best usable general model, else a people-only model with a note saying
 * so, else a 503 that lists how to install each.
 */
import { AtelierError, modelNotInstalled } from "../../core/errors.js";
import type { CatalogEntry } from "../catalog/catalog-types.js";
import type { ModelAvailability } from "../store/model-availability.js";
import { SEGMENTATION_MODELS, segmentationEntry, subjectsOf, type SegmentationSpec } from "./segmentation-models.js";

export interface ChosenModel {
  entry: CatalogEntry;
  spec: SegmentationSpec;
  /** For the response: why the result may fall short (a people-only default); undefined otherwise. */
  note?: string;
}

/** The registered model named `requested`, with its catalog record; 400 listing the others when there is none. */
export function namedModel(requested: string): ChosenModel {
  const known = SEGMENTATION_MODELS.map((spec) => ({ spec, entry: segmentationEntry(spec) }));
  const found = known.find(({ spec }) => spec.id === requested);
  if (found) return found;
  const ids = known.map(({ spec }) => spec.id).join(", ");
  throw new AtelierError("INVALID_INPUT", `Unknown background-removal model "${requested}". Available: ${ids}.`, {
    issues: [{ path: "model", message: `Expected one of ${ids} but received "${requested}".` }],
  });
}

/** A default decided by the picture: the people model runs first, and the general model where it finds no person. */
export interface PerImageChoice {
  general: ChosenModel;
  portrait: ChosenModel;
}

/** One model for the request, or a choice the picture makes (no model named, both kinds usable). */
export function modelChoice(requested: string, models: ModelAvailability): { model: ChosenModel } | { perImage: PerImageChoice } {
  if (requested === "") {
    const usable = SEGMENTATION_MODELS.map((spec) => ({ spec, entry: segmentationEntry(spec) })).filter(({ entry }) => models.isUsable(entry));
    const general = usable.find(({ entry }) => subjectsOf(entry) === "any");
    const portrait = usable.find(({ spec }) => spec.detectsPeople === true);
    if (general && portrait) return { perImage: { general, portrait } };
  }
  return { model: chooseModel(requested, models) };
}

export function chooseModel(requested: string, models: ModelAvailability): ChosenModel {
  if (requested !== "") {
    const found = namedModel(requested);
    models.assertUsable(found.entry);
    return found;
  }
  const known = SEGMENTATION_MODELS.map((spec) => ({ spec, entry: segmentationEntry(spec) }));
  const usable = known.filter(({ entry }) => models.isUsable(entry));
  const general = usable.find(({ entry }) => subjectsOf(entry) === "any");
  if (general) return general;
  const people = usable[0];
  if (people) {
    const install = known
      .filter(({ entry }) => subjectsOf(entry) === "any")
      .map(({ entry }) => `\`${models.store.installCommand(entry)}\` (${entry.id})`)
      .join(" or ");
    return {
      ...people,
      note: `No general-object model is installed, so "${people.entry.id}" ran: it finds people only, and other subjects may be cut badly. For any subject an operator installs ${install}.`,
    };
  }
  throw modelNotInstalled("No background-removal model is installed on this server.", {
    install: known.map(({ entry }) => models.installable(entry, subjectsOf(entry) === "any" ? "any subject" : "people only")),
    lead: "An operator installs one with",
  });
}
