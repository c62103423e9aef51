/**
 * Tiny Stable Diffusion exports installed into a temporary models folder, a worker context over
 * them, and graph handles that record every run, for the diffusion tests.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../../core/config.js";
import { createLogger } from "../../../core/logger.js";
import type { CatalogEntry } from "../../../models/catalog/catalog-types.js";
import type { DiffusionGraph, GraphHandle } from "../../../workers/generation/diffusion/diffusion-graph.js";
import type { DiffusionModel } from "../../../workers/generation/diffusion/diffusion-pipeline.js";
import type { TensorMap } from "../../../workers/onnx/tensor-data.js";
import type { WorkerContext } from "../../../workers/worker-context.js";
import { createWorkerContext } from "../../../workers/worker-server.js";
import { defaultMergesFile, installTinyDiffusion, type TinyDiffusionOptions } from "../../../scripts/make-tiny-diffusion.js";
import { hasMirrorModel } from "../../support/test-assets.js";

/** OpenAI's CLIP merges in the mirror: the tokenizer tests and the tiny exports need it. */
export const clipMergesFile = defaultMergesFile();
export const hasClipMerges = (): boolean => hasMirrorModel("clip-bpe-vocab");

export interface TinyWorld {
  dir: string;
  context: WorkerContext;
  install(id: string, options?: TinyDiffusionOptions): CatalogEntry;
  dispose(): Promise<void>;
}

export function tinyWorld(): TinyWorld {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-tiny-sd-"));
  const config = loadConfig({ ATELIER_DATA_DIR: dir, ATELIER_MODELS_DIR: dir, LOG_LEVEL: "silent", ATELIER_ONNX_THREADS: "1" });
  const context = createWorkerContext(config, createLogger("silent"));
  return {
    dir,
    context,
    install: (id, options) => installTinyDiffusion(dir, id, options),
    async dispose() {
      await context.runtime.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One recorded run: the graph, a copy of its feeds, and its outputs. */
export interface RecordedRun {
  graph: string;
  feeds: TensorMap;
  outputs: TensorMap;
}

function copyFeeds(feeds: TensorMap): TensorMap {
  return Object.fromEntries(Object.entries(feeds).map(([name, tensor]) => [name, { data: tensor.data.slice(), dims: [...tensor.dims] }]));
}

function recording(name: string, handle: GraphHandle, runs: RecordedRun[]): GraphHandle {
  return {
    key: handle.key,
    use: (work, signal) =>
      handle.use((graph) => {
        const recorded: DiffusionGraph = {
          signature: graph.signature,
          run: async (feeds, runSignal) => {
            const copy = copyFeeds(feeds);
            const outputs = await graph.run(feeds, runSignal);
            runs.push({ graph: name, feeds: copy, outputs });
            return outputs;
          },
        };
        return work(recorded);
      }, signal),
  };
}

/** `model` with every graph run recorded into `runs`, in order. */
export function recordRuns(model: DiffusionModel, runs: RecordedRun[]): DiffusionModel {
  return {
    ...model,
    textEncoder: recording("text_encoder", model.textEncoder, runs),
    unet: recording("unet", model.unet, runs),
    vaeDecoder: recording("vae_decoder", model.vaeDecoder, runs),
  };
}

/** Mean absolute difference of two byte arrays. */
export function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}
