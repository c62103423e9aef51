/**
 * A models folder with the named models pulled from the mirror (once per test process), for tests
 * that run real models through the service: `startTestService({ ATELIER_MODELS_DIR: dir })`.
 * Callers guard with `hasMirrorModel(...)` so a machine without the mirror skips with a notice.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { modelConverters } from "../../models/convert/model-converters.js";
import { pullModel } from "../../models/store/model-installer.js";
import { ModelStore } from "../../models/store/model-store.js";
import { modelMirror } from "./test-assets.js";

let shared: { dir: string; store: ModelStore } | undefined;

export async function installedModelsDir(ids: string[]): Promise<string> {
  if (!shared) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-test-models-"));
    shared = { dir, store: new ModelStore(dir) };
  }
  for (const id of ids) {
    const entry = catalogEntry(id);
    if (!entry) throw new Error(`unknown model ${id}`);
    await pullModel(entry, shared.store, { from: modelMirror, converters: modelConverters });
  }
  return shared.dir;
}
