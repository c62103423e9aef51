/**
 * The onnxruntime session options that differ between models: a catalog entry states its own where
 * they differ from {@link DEFAULT_SESSION_SETTINGS} (bench/session-options.ts measures every model
 * under each and says where the catalog's choice and the measurements disagree); a graph the catalog
 * does not know (a test's tiny model) gets the default.
 */
import type { CatalogEntry, SessionSettings } from "../../models/catalog/catalog-types.js";

export type { SessionSettings } from "../../models/catalog/catalog-types.js";

/**
 * Arena on, memory pattern off. The arena spares each run allocating its activations anew (several
 * times the run itself for large graphs without it); the pattern plans one block per input shape on
 * top of the arena's, which made ISNet's resident memory grow from run to run and the small graphs
 * no faster.
 */
export const DEFAULT_SESSION_SETTINGS: SessionSettings = { cpuArena: true, memoryPattern: false };

export function sessionSettings(entry: CatalogEntry): SessionSettings {
  return entry.session ?? DEFAULT_SESSION_SETTINGS;
}
