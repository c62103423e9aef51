/**
 * Times the Stable Diffusion pipeline and compares it with the bare session runs it is made of:
 * per-step UNet time, and the pipeline's overhead (tokenizer, samplers, guidance, latent copies,
 * feed conversion) over the sum of the same graph runs replayed with the same feeds through the
 * same sessions. The goal is an overhead under 5% of the session time.
 *
 * Two measures: "vs bare" compares the pipeline with a separate replay (sensitive to machine noise
 * between the two), "outside runs" is the pipeline's wall time not spent inside a graph run in the
 * same pass (the JavaScript work itself: tokenizer, samplers, guidance, copies), the steadier one.
 *
 *   npx tsx bench/diffusion.ts [--model ID] [--size 512] [--steps 10] [--scheduler euler]
 *     [--guidance 7.5] [--repeat 5] [--channels 32] [--depth 4] [--hidden 64] [--variant sd15]
 *
 * Without --model it writes a tiny random export (scripts/make-tiny-diffusion.ts; --channels,
 * --depth and --hidden make its runs heavier) into a temporary models folder; with --model it
 * uses that installed export from ATELIER_MODELS_DIR. Threads: ATELIER_ONNX_THREADS.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { catalogEntry } from "../models/catalog/model-catalog.js";
import type { CatalogEntry } from "../models/catalog/catalog-types.js";
import { createDiffusionGenerator } from "../workers/generation/diffusion/diffusion-generator.js";
import type { DiffusionGraph, GraphHandle } from "../workers/generation/diffusion/diffusion-graph.js";
import { runDiffusion, type DiffusionModel } from "../workers/generation/diffusion/diffusion-pipeline.js";
import { samplerSpec } from "../workers/generation/diffusion/schedulers/sampler-registry.js";
import type { TensorMap } from "../workers/onnx/tensor-data.js";
import { createWorkerContext } from "../workers/worker-server.js";
import { installTinyDiffusion, type TinyVariant } from "../scripts/make-tiny-diffusion.js";

interface Run {
  graph: string;
  feeds: TensorMap;
  ms: number;
}

/** `handle` with each run timed (and its feeds kept, for the replay). */
function timed(name: string, handle: GraphHandle, runs: Run[]): GraphHandle {
  return {
    key: handle.key,
    use: (work, signal) =>
      handle.use((graph) => {
        const wrapped: DiffusionGraph = {
          signature: graph.signature,
          run: async (feeds, runSignal) => {
            const started = performance.now();
            const outputs = await graph.run(feeds, runSignal);
            runs.push({ graph: name, feeds, ms: performance.now() - started });
            return outputs;
          },
        };
        return work(wrapped);
      }, signal),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor(sorted.length / 2)]!;
};
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const ms = (value: number) => `${value.toFixed(2)} ms`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: "string" },
      size: { type: "string", default: "512" },
      steps: { type: "string", default: "10" },
      scheduler: { type: "string", default: "euler" },
      guidance: { type: "string", default: "7.5" },
      repeat: { type: "string", default: "5" },
      channels: { type: "string", default: "32" },
      depth: { type: "string", default: "4" },
      hidden: { type: "string", default: "64" },
      variant: { type: "string", default: "sd15" },
    },
  });
  const size = Number(values.size);
  const steps = Number(values.steps);
  const repeat = Number(values.repeat);
  const sampler = samplerSpec(values.scheduler!);
  if (!sampler) throw new Error(`Unknown scheduler ${values.scheduler}`);

  let modelsDir: string;
  let entry: CatalogEntry;
  let temporary: string | undefined;
  if (values.model) {
    const found = catalogEntry(values.model);
    if (!found) throw new Error(`Unknown model ${values.model}`);
    entry = found;
    modelsDir = loadConfig().modelsDir;
  } else {
    temporary = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-bench-sd-"));
    modelsDir = temporary;
    entry = installTinyDiffusion(modelsDir, "tiny-bench", {
      variant: values.variant as TinyVariant,
      channels: Number(values.channels),
      depth: Number(values.depth),
      hidden: Number(values.hidden),
    });
  }
  const config = loadConfig({ ...process.env, ATELIER_MODELS_DIR: modelsDir, ATELIER_DATA_DIR: temporary ?? process.env.ATELIER_DATA_DIR, LOG_LEVEL: "silent" });
  const context = createWorkerContext(config, createLogger("silent"));
  try {
    const generator = createDiffusionGenerator(entry, context);
    const base = await generator.model();
    const request = { prompt: "a photograph of an astronaut riding a horse", negativePrompt: "blurry", width: size, height: size, steps, guidanceScale: Number(values.guidance), seed: 42, sampler };
    const signal = new AbortController().signal;
    // Warm-up: loads the three sessions and lets the allocator settle.
    await runDiffusion(base, request, () => undefined, signal);

    console.log(`model ${entry.id}, ${size}x${size}, ${sampler.name} x${steps}, guidance ${request.guidanceScale}, ${config.inference.threads} onnx threads, ${repeat} runs\n`);
    const rows: string[][] = [];
    for (let r = 0; r < repeat; r++) {
      const runs: Run[] = [];
      const model: DiffusionModel = {
        ...base,
        textEncoder: timed("text_encoder", base.textEncoder, runs),
        unet: timed("unet", base.unet, runs),
        vaeDecoder: timed("vae_decoder", base.vaeDecoder, runs),
      };
      const started = performance.now();
      await runDiffusion(model, request, () => undefined, signal);
      const pipeline = performance.now() - started;

      // The same runs, same feeds, same sessions, back to back: the bare session time.
      const bare: Run[] = [];
      for (const name of ["text_encoder", "unet", "vae_decoder"] as const) {
        const handle = name === "text_encoder" ? base.textEncoder : name === "unet" ? base.unet : base.vaeDecoder;
        await handle.use(async (graph) => {
          for (const run of runs.filter((one) => one.graph === name)) {
            const t0 = performance.now();
            await graph.run(run.feeds);
            bare.push({ graph: name, feeds: run.feeds, ms: performance.now() - t0 });
          }
        });
      }
      const bareTotal = sum(bare.map((run) => run.ms));
      const inside = sum(runs.map((run) => run.ms));
      const unet = runs.filter((run) => run.graph === "unet").map((run) => run.ms);
      const bareUnet = bare.filter((run) => run.graph === "unet").map((run) => run.ms);
      rows.push([
        String(r + 1),
        ms(pipeline),
        ms(bareTotal),
        `${(((pipeline - bareTotal) / bareTotal) * 100).toFixed(1)} %`,
        ms(pipeline - inside),
        `${(((pipeline - inside) / inside) * 100).toFixed(2)} %`,
        ms(median(unet)),
        ms(median(bareUnet)),
        ms(sum(runs.filter((run) => run.graph !== "unet").map((run) => run.ms))),
      ]);
    }
    // Medians over the runs: one run on a busy machine can be off by a factor of two.
    const numeric = rows.map((row) => row.slice(1).map((cell) => Number.parseFloat(cell)));
    rows.push([
      "median",
      ...numeric[0]!.map((_, column) => {
        const value = median(numeric.map((row) => row[column]!));
        return rows[0]![column + 1]!.endsWith("%") ? `${value.toFixed(column === 4 ? 2 : 1)} %` : ms(value);
      }),
    ]);
    const header = ["run", "pipeline", "Σ bare runs", "vs bare", "outside runs", "outside/runs", "UNet/step", "bare UNet", "text+VAE"];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padStart(widths[i]!)).join("  "));
  } finally {
    await context.runtime.dispose();
    if (temporary) fs.rmSync(temporary, { recursive: true, force: true });
  }
}

await main();
