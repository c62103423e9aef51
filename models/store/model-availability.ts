/**
 * Whether a catalogued model can run on this server, as the request checks ask it: installed, not
 * disabled by ATELIER_DISABLE_NON_COMMERCIAL, and how to install it when not. The workers' model
 * loader (workers/model-loader.ts) answers it; the checks need nothing else from the loader.
 */
import type { InstallableModel } from "../../core/errors.js";
import type { CatalogEntry } from "../catalog/catalog-types.js";
import type { ModelStore } from "./model-store.js";

export interface ModelAvailability {
  /** Usable now: installed and not disabled. */
  isUsable(entry: CatalogEntry): boolean;
  /** Throws MODEL_NOT_INSTALLED (503) naming the install command, or the setting that disabled it. */
  assertUsable(entry: CatalogEntry): void;
  /** The entry as a MODEL_NOT_INSTALLED names it, with this server's install command. */
  installable(entry: CatalogEntry, note?: string): InstallableModel;
  readonly store: Pick<ModelStore, "installCommand">;
}
