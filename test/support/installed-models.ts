/**
 * A models folder with the named models pulled from the mirror, for tests that run real models
 * through the service: `startTestService({ ATELIER_MODELS_DIR: await installModels(modelsDir, ids) })`
 * over a `modelsDir = fileTempDir("test-models")` the test file asked for (temp-dir.ts removes it).
 * Callers guard with `hasMirrorModel(...)` so a machine without the mirror skips with a notice.
 */
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { modelConverters } from "../../models/convert/model-converters.js";
import { pullModel } from "../../models/store/model-installer.js";
import { ModelStore } from "../../models/store/model-store.js";
import { makeTempDir, removeTempDir } from "./make-temp-dir.js";
import { modelMirror } from "./test-assets.js";

/** Pulls the named models from the mirror into `dir` and returns `dir`. */
export async function installModels(dir: string, ids: string[]): Promise<string> {
  const store = new ModelStore(dir);
  for (const id of ids) {
    const entry = catalogEntry(id);
    if (!entry) throw new Error(`unknown model ${id}`);
    await pullModel(entry, store, { from: modelMirror, converters: modelConverters });
  }
  return dir;
}

let benchModels: string | undefined;

/**
 * One models folder for a whole benchmark process, the named models added to it; the benchmark
 * removes it with `removeBenchModelsDir()` when it ends.
 */
export async function installedModelsDir(ids: string[]): Promise<string> {
  benchModels ??= makeTempDir("bench-models");
  return installModels(benchModels, ids);
}

export function removeBenchModelsDir(): void {
  if (benchModels !== undefined) removeTempDir(benchModels);
  benchModels = undefined;
}
