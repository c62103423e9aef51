/**
 * Checks a StyleTransferRequest before any work: the style (known, installed, not disabled), the
 * strength and the image. Client mistakes are 400 with the field named; a style this server cannot run
 * is 503 MODEL_NOT_INSTALLED naming what an operator does about it.
 */
import { AtelierError, modelNotInstalled } from "../../core/errors.js";
import { LIMITS } from "../../core/limits.js";
import type { StyleTransferRequest } from "../../gen/atelier/style/v1/style_transfer_service.js";
import type { CatalogEntry } from "../catalog/catalog-types.js";
import { entriesForTask } from "../catalog/model-catalog.js";
import type { ModelAvailability } from "../store/model-availability.js";

/** Every style of the catalog, in catalog order. */
export const STYLE_ENTRIES: readonly CatalogEntry[] = entriesForTask("style-transfer");

/** The weight packs the styles come from (folders of the model mirror), for operators. */
const STYLE_PACKS = "style-fast-ml5 (la-muse, mathura, matilde-perez, matta, rain-princess, scream, udnie, wave, wreck) or style-fast-nc16 (candy-lite, mosaic-lite, rain-princess-lite, udnie-lite)";

export interface StyleJob {
  entry: CatalogEntry;
  /** 0 (the original) to 1 (the full painting). */
  strength: number;
  preserveColors: boolean;
  imageBytes: Uint8Array;
}

/** Styles this server can run now: installed and not disabled. Reads the models folder; for error paths. */
function usableStyles(models: ModelAvailability): string[] {
  return STYLE_ENTRIES.filter((entry) => models.isUsable(entry)).map((entry) => entry.id);
}

const listed = (ids: readonly string[]) => (ids.length > 0 ? ids.join(", ") : "none");

/** The catalog record of the style `id`, undefined for an id the catalog does not know. */
export function styleEntry(id: string): CatalogEntry | undefined {
  return STYLE_ENTRIES.find((candidate) => candidate.id === id);
}

/** The 400 for a style id the catalog does not know, naming the styles `usable` on this server. */
export function unknownStyleError(id: string, usable: readonly string[]): AtelierError {
  const known = STYLE_ENTRIES.map((entry) => entry.id).join(", ");
  return new AtelierError("INVALID_INPUT", `Unknown style "${id}". Available styles: ${known} (usable on this server: ${listed(usable)}; see GET /api/v1/models).`, {
    issues: [{ path: "style", message: `Expected one of ${known} but received "${id}".` }],
  });
}

/** The catalog record for `id`; 400 for an unknown id, 503 when this server cannot run it. */
export function resolveStyle(id: string, models: ModelAvailability): CatalogEntry {
  const known = STYLE_ENTRIES.map((entry) => entry.id).join(", ");
  if (id === "") {
    if (!STYLE_ENTRIES.some((entry) => models.isUsable(entry))) {
      throw modelNotInstalled(
        `No style-transfer model is installed on this server. An operator installs styles from ${STYLE_PACKS} with \`npm run models -- pull <style>\`, for example \`npm run models -- pull mathura\`.`,
      );
    }
    throw new AtelierError("INVALID_INPUT", `Expected a style id for style but received none. Styles usable on this server: ${listed(usableStyles(models))}.`, {
      issues: [{ path: "style", message: `Expected one of ${known}.` }],
    });
  }
  const entry = styleEntry(id);
  if (!entry) throw unknownStyleError(id, usableStyles(models));
  try {
    models.assertUsable(entry);
  } catch (error) {
    if (!(error instanceof AtelierError) || error.code !== "MODEL_NOT_INSTALLED") throw error;
    throw modelNotInstalled(`${error.message} Usable style-transfer styles on this server: ${listed(usableStyles(models))}.`, { cause: error, retryAfterSeconds: error.retryAfterSeconds });
  }
  return entry;
}

/** The strength to apply: 1 when unset, else a number from 0 to 1. */
export function strengthOf(strength: number | undefined): number {
  if (strength === undefined) return 1;
  const { min, max } = LIMITS.styleStrength;
  if (!Number.isFinite(strength) || strength < min || strength > max) {
    throw new AtelierError("INVALID_INPUT", `Expected number between ${min} and ${max} for strength but received ${strength}.`, {
      issues: [{ path: "strength", message: `Expected number between ${min} and ${max} but received ${strength}.` }],
    });
  }
  return strength;
}

/** The request checked in contract order: style, strength, image. */
export function checkStyleRequest(request: StyleTransferRequest, models: ModelAvailability): StyleJob {
  const entry = resolveStyle(request.style, models);
  const strength = strengthOf(request.strength);
  if (!request.image || request.image.data.byteLength === 0) {
    throw new AtelierError("INVALID_INPUT", "The request carries no image bytes.", { issues: [{ path: "image", message: "Required." }] });
  }
  return { entry, strength, preserveColors: request.preserveColors, imageBytes: request.image.data };
}
