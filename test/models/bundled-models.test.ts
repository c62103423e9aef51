/**
 * Atelier's own models, committed in its tree (source kind "bundled", models/catalog/bundled/):
 * installed in any models folder without a pull, verified against their pinned checksums, refused when
 * their bytes do not match, never removable, and run by the loader like any other graph.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLED_WEIGHTS_DIR } from "../../models/catalog/bundled-weights.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { MODEL_CATALOG, weightSize } from "../../models/catalog/model-catalog.js";
import { ModelInstallError } from "../../models/store/fetch-weight-file.js";
import { pullModel, removeModel, verifyModel } from "../../models/store/model-installer.js";
import { ModelLoader } from "../../workers/model-loader.js";
import { ModelStore } from "../../models/store/model-store.js";
import { fileTempDir } from "../support/temp-dir.js";
import { entry, noConverters } from "./installer-fixtures.js";

const scratch = fileTempDir("bundled");
const emptyStore = () => new ModelStore(fs.mkdtempSync(path.join(scratch, "store-")));

/** `model` with the pinned checksum of its first file changed: what a damaged copy looks like to the catalog. */
function withWrongChecksum(model: CatalogEntry): CatalogEntry {
  if (model.source.kind !== "bundled") throw new Error(`${model.id} is not bundled`);
  const [first, ...rest] = model.source.files;
  return { ...model, source: { ...model.source, files: [{ ...first!, sha256: "0".repeat(64) }, ...rest] } };
}

describe("bundled models", () => {
  const bundled = MODEL_CATALOG.filter((model) => model.source.kind === "bundled");

  it("are Atelier's compact upscalers, with their files in the bundled folder", () => {
    expect(bundled.map((model) => model.id).sort()).toEqual(["atelier-compact-x2", "atelier-compact-x4"]);
    for (const model of bundled) {
      if (model.source.kind !== "bundled") continue;
      for (const file of model.source.files) {
        expect(file.origin.bundled).toBe(`${model.id}/${file.name}`);
        expect(fs.statSync(path.join(BUNDLED_WEIGHTS_DIR, file.origin.bundled!)).size).toBe(file.size);
      }
      expect(weightSize(model)).toBeGreaterThan(2_000_000);
      expect(model.license).toBe("CC-BY-4.0");
      expect(model.attribution).toMatch(/Philip Hofmann.*CC BY 4\.0/);
    }
  });

  it.each(["atelier-compact-x4", "atelier-compact-x2"])("%s is installed in an empty models folder and verifies", async (id) => {
    const store = emptyStore();
    expect(store.status(entry(id))).toEqual({ installed: true });
    expect(await verifyModel(entry(id), store)).toEqual({ ok: true, problems: [] });
    expect(await pullModel(entry(id), store, { converters: noConverters })).toBe("already-installed");
    expect(fs.readdirSync(store.modelsDir)).toEqual([]);
  });

  it("a copy whose bytes do not match the pin fails verification, pull and loading", async () => {
    const store = emptyStore();
    const damaged = withWrongChecksum(entry("atelier-compact-x4"));
    const verified = await verifyModel(damaged, store);
    expect(verified.ok).toBe(false);
    expect(verified.problems[0]).toMatch(/atelier-compact-x4\.onnx: sha256 [0-9a-f]{64}, expected 0{64}/);
    await expect(pullModel(damaged, store, { converters: noConverters })).rejects.toThrow(/ships with Atelier and its files are damaged/);
    const loader = new ModelLoader(store, { disableNonCommercial: false });
    await expect(loader.graphLoader(damaged, "x4")()).rejects.toThrow(/weights of "atelier-compact-x4" are damaged/);
    const bytes = await loader.graphLoader(entry("atelier-compact-x4"), "x4")();
    expect(bytes.length).toBe(fs.statSync(path.join(BUNDLED_WEIGHTS_DIR, "atelier-compact-x4", "atelier-compact-x4.onnx")).size);
  });

  it("cannot be removed", () => {
    expect(() => removeModel(entry("atelier-compact-x2"), emptyStore())).toThrow(ModelInstallError);
    expect(() => removeModel(entry("atelier-compact-x2"), emptyStore())).toThrow(/ships with Atelier/);
  });
});
