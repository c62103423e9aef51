/** A model's files with their origins and pinned checksums, from weight-file-sets + pinned-weights.json. */
import pinned from "./pinned-weights.json" with { type: "json" };
import type { WeightFile } from "./catalog-types.js";
import { WEIGHT_FILE_SETS } from "./weight-file-sets.js";

const PINS = pinned as Record<string, Record<string, { size: number; sha256: string }>>;

export function pinnedFiles(modelId: string): WeightFile[] {
  const set = WEIGHT_FILE_SETS[modelId];
  const pins = PINS[modelId];
  if (!set || !pins) throw new Error(`No pinned weight files for model ${modelId}; run scripts/pin-weights.ts.`);
  return Object.entries(pins).map(([name, pin]) => ({
    name,
    sha256: pin.sha256,
    size: pin.size,
    origin: set.npmPackage
      ? { npm: { package: set.npmPackage, path: `${set.folder}/${name}` } }
      : set.bundled
        ? { bundled: `${set.folder}/${name}` }
        : { mirror: `${set.folder}/${name}`, ...(set.urlBase ? { url: `${set.urlBase}/${name}` } : {}) },
  }));
}
