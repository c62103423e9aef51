/**
 * Draws prompts with Atelier's doodle generator (cvae-quickdraw, installed from the model mirror into
 * a temporary folder) for the text-to-image check (training/atelier_training/t2i/check.py): one
 * image per prompt and seed, its pixels as drawn (grey, base64), or null where the generator refuses
 * the prompt.
 *
 *   npx tsx scripts/doodle-samples.ts PROMPTS.json OUT.json    (PROMPTS.json: {"prompts": [...], "seeds": [...], "size": 64})
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../core/config.js";
import { AtelierError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { catalogEntry } from "../models/catalog/model-catalog.js";
import { modelConverters } from "../models/convert/model-converters.js";
import { pullModel } from "../models/store/model-installer.js";
import { ModelStore } from "../models/store/model-store.js";
import { createDoodleGenerator } from "../workers/generation/doodle/doodle-generator.js";
import { createWorkerContext } from "../workers/worker-server.js";

const DOODLE_MODEL = "cvae-quickdraw";

async function main(): Promise<void> {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) throw new Error("usage: npx tsx scripts/doodle-samples.ts PROMPTS.json OUT.json");
  const request = JSON.parse(fs.readFileSync(input, "utf8")) as { prompts: string[]; seeds: number[]; size: number };
  const mirror = path.resolve(process.env.ATELIER_MODEL_MIRROR ?? "/work/shared/models");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-doodle-samples-"));
  try {
    const entry = catalogEntry(DOODLE_MODEL);
    if (!entry) throw new Error(`${DOODLE_MODEL} is not in the catalog`);
    await pullModel(entry, new ModelStore(dir), { from: mirror, converters: modelConverters });
    const context = createWorkerContext(loadConfig({ ATELIER_DATA_DIR: dir, ATELIER_MODELS_DIR: dir, LOG_LEVEL: "silent", ATELIER_ONNX_THREADS: "1" }), createLogger("silent"));
    const generator = createDoodleGenerator(entry, context);
    const signal = new AbortController().signal;
    const images: Array<{ prompt: string; seed: number; pixels: string | null; refusal?: string }> = [];
    for (const prompt of request.prompts) {
      for (const seed of request.seeds) {
        try {
          const { image } = await generator.generate({ prompt, negativePrompt: "", width: request.size, height: request.size, seed }, () => undefined, signal);
          images.push({ prompt, seed, pixels: Buffer.from(image.data).toString("base64") });
        } catch (error) {
          if (!(error instanceof AtelierError)) throw error;
          images.push({ prompt, seed, pixels: null, refusal: error.code });
        }
      }
    }
    await context.runtime.dispose();
    fs.writeFileSync(output, JSON.stringify({ size: request.size, images }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
