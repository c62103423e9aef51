/** What the installer tests share: catalog lookups that must succeed, and converters that must not run. */
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import type { ModelConverters } from "../../models/store/model-installer.js";

/** Converters for installs that must not convert anything: any call fails the test. */
export const noConverters = new Proxy({} as ModelConverters, {
  get: () => async () => {
    throw new Error("no conversion expected in this test");
  },
});

/** The catalog entry `id`, which the test relies on existing. */
export function entry(id: string): CatalogEntry {
  const found = catalogEntry(id);
  if (!found) throw new Error(`no catalog entry ${id}`);
  return found;
}
