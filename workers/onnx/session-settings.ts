/**
 * The onnxruntime session options that differ between models: a catalog entry states its own where
 * they differ from {@link DEFAULT_SESSION_SETTINGS} (bench/session-options.ts measures every model
 * under each and says where the catalog's choice and the measurements disagree); a graph the catalog
 * does not know (a test's tiny model) gets the default.
 */
import type { CatalogEntry, SessionSettings } from "../../models/catalog/catalog-types.js";

export type { SessionSettings } from "../../models/catalog/catalog-types.js";

/**
 * Arena and memory pattern on, onnxruntime's own default: on the tiled and small graphs no other
 * setting was clearly faster in bench/session-options.ts's rounds (the style graphs were slower with
 * the pattern off), and they keep only a tile's working set. A model that differs (ISNet) says so in
 * its catalog entry.
 */
export const DEFAULT_SESSION_SETTINGS: SessionSettings = { cpuArena: true, memoryPattern: true };

export function sessionSettings(entry: CatalogEntry): SessionSettings {
  return entry.session ?? DEFAULT_SESSION_SETTINGS;
}
