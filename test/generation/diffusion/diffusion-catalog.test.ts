/**
 * The Stable Diffusion catalog records: valid defaults for the pipeline, the constraints the
 * service enforces, and the one pinned file (the CLIP merges) matching the mirror's copy.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { DIFFUSION_MODELS } from "../../../models/catalog/entries/diffusion-models.js";
import { sha256OfFile } from "../../../models/store/fetch-weight-file.js";
import { diffusionSettings } from "../../../workers/generation/diffusion/diffusion-settings.js";
import { DIFFUSION_GRAPH_SOURCES } from "../../../models/catalog/diffusion-export-layout.js";
import { clipMergesFile, hasClipMerges } from "./tiny-export.js";

describe("diffusion catalog records", () => {
  it.each(DIFFUSION_MODELS.map((entry) => [entry.id, entry] as const))("%s is a photographic generator with valid defaults", (_id, entry) => {
    expect(entry.task).toBe("generate");
    expect(entry.photographic).toBe(true);
    // The generation service's registry picks the diffusion generator by this family.
    expect(entry.details?.family).toBe("stable-diffusion");
    for (const [name, source] of Object.entries(DIFFUSION_GRAPH_SOURCES)) expect(entry.graphs[name]).toMatchObject(source);
    expect(() => diffusionSettings(entry)).not.toThrow();
    const g = entry.generation!;
    expect(g.sizeMultiple).toBe(8);
    for (const size of [g.defaultWidth, g.defaultHeight, g.minSize, g.maxWidth, g.maxHeight]) expect(size % 8).toBe(0);
    expect(entry.source.kind).toBe("files");
    for (const file of entry.source.kind === "files" ? entry.source.files : []) {
      expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(file.origin.url ?? "").toMatch(/^https:\/\//);
    }
  });

  it("uses 512 for SD 1.5, SD-Turbo and LCM, 768 for SD 2.1", () => {
    const defaults = Object.fromEntries(DIFFUSION_MODELS.map((entry) => [entry.id, entry.generation!.defaultWidth]));
    expect(defaults).toEqual({ "sd-turbo": 512, "stable-diffusion-1-5": 512, "stable-diffusion-2-1": 768, "lcm-dreamshaper-v7": 512 });
  });

  it.runIf(hasClipMerges())("pins the CLIP merges file with the mirror copy's checksum and size", async () => {
    const file = DIFFUSION_MODELS[0]!.source.kind === "files" ? DIFFUSION_MODELS[0]!.source.files[0]! : undefined;
    expect(file?.name).toBe("clip/bpe_simple_vocab_16e6.txt.gz");
    expect(await sha256OfFile(clipMergesFile)).toBe(file!.sha256);
    expect(fs.statSync(clipMergesFile).size).toBe(file!.size);
  });
});
