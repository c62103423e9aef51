/**
 * Resident memory of the service's own model work, in its own configuration (core/config.ts: the
 * onnxruntime threads, ATELIER_MODEL_MEMORY_MB, the session options of workers/onnx), on real-size
 * inputs, through the worker's own code paths (runRemoval, upscale), every model we can install:
 *
 *   npm run bench:memory [-- --only isnet-general,lsdir-compact-x4] [--skip-mixed] [--allocator both|tuned|default]
 *                        [--soak SECONDS] [--allocator-timing ROUNDS [--settings "mmap 4 MiB,mmap 16 MiB"]]
 *
 * 1. One fresh child process per workload: resident memory before (the worker's context made, no
 *    model loaded, the inference thread not yet started), after the call, the process's peak (the
 *    kernel's high-water mark, which includes the run), after the service's idle release
 *    (ATELIER_MODEL_IDLE_RELEASE_MS, shortened here: a model that asks for it released, with the
 *    memory kept between calls, workers/idle-memory.ts; the inference thread still running, as in
 *    the service), and after the runtime is disposed (the thread ended); with the service's malloc
 *    settings (workers/onnx/allocator-settings.ts, "tuned") and with glibc's defaults, side by side.
 * 2. A mixed-workload soak in one process (background removal and upscaling in turn, --soak seconds,
 *    default 60) under the configured budget: resident memory printed every second against the line
 *    the runtime keeps the process under (ATELIER_MODEL_MEMORY_MB plus PROCESS_MARGIN_BYTES), with the
 *    sessions loaded, what they are charged and the evictions so far; then resident memory after all
 *    are released.
 * 3. With --allocator-timing ROUNDS: the time of calls (model loaded, after a warm call) under glibc's
 *    defaults and under each candidate malloc setting, one fresh process per setting, settings
 *    alternating within each round; medians and the median of each round's ratio to the defaults.
 *
 * Models come from the mirror (ATELIER_MODEL_MIRROR) or their npm packages; a missing one is skipped
 * with a notice. Inputs are generated (noise over a gradient), so nothing needs fetching. Timings are
 * not the point here; the machine and load average are printed so figures can be compared.
 */
import { execFile, spawnSync } from "node:child_process";
import os from "node:os";
import { promisify } from "node:util";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { OutputFormat } from "../gen/atelier/image/v1/image.js";
import { installedModelsDir, removeBenchModelsDir } from "../test/support/installed-models.js";
import { chooseModel } from "../models/requests/background-model-choice.js";
import { runRemoval } from "../workers/background/remove-background.js";
import { openImage } from "../core/open-image.js";
import { ALLOCATOR_ENV, hasAllocatorSettings } from "../workers/onnx/allocator-settings.js";
import { upscale } from "../workers/upscale/upscale-service.js";
import { UpscaleQuality } from "../gen/atelier/upscale/v1/upscale_service.js";
import { createWorkerContext } from "../workers/worker-server.js";
import type { WorkerContext } from "../workers/worker-context.js";
import { reportGoal } from "./support/goal-rows.js";
import { loadAverage as load, median } from "./support/figures.js";

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
      await upscale({ image: { data, mediaType: "image/png" } as never, scale, model, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG, quality: UpscaleQuality.UPSCALE_QUALITY_UNSPECIFIED }, context, new AbortController().signal);
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

/**
 * The memory goals: ISNet on a 1 MP photo, the whole process under 1.2 GB (10^9 bytes) at its peak,
 * and once ISNet is released for being idle back within 100 MB of what it held idle, with the
 * service's malloc settings. The idle figure is taken before the inference thread starts, so what
 * starting it costs (onnxruntime's code, the thread's heap) counts against the goal.
 */
const ISNET_GOAL = { workload: WORKLOADS[0]!, limitMiB: Math.floor(1.2e9 / MiB), keptMiB: Math.floor(100e6 / MiB) };

/** What --allocator-timing times by default: the calls where the malloc settings were suspected of a slowdown. */
const TIMED_WORKLOADS: Workload[] = [upscaling("espcn-x3", 256, 3), upscaling("esrgan-thick", 64, 4), removal("isnet-general", 1024)];

function residentMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return Math.round(process.memoryUsage().rss / MiB);
}
/** The process's peak: the runtime resets the kernel's mark around runs and keeps the marks it read. */
function peakMiB(context: WorkerContext): number {
  return Math.round(context.runtime.stats().peakResidentBytes / MiB);
}
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

/** The idle-release time of the per-workload children: the service's path, without its minute's wait. */
const CHILD_IDLE_RELEASE_MS = 1000;

async function contextFor(models: string[], env: NodeJS.ProcessEnv = {}): Promise<WorkerContext> {
  const modelsDir = await installedModelsDir(models);
  return createWorkerContext(loadConfig({ ...process.env, ...env, ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
}

/**
 * Waits for a model's idle release (which lets the memory kept between calls go) where its settings
 * ask for one, then for resident memory to settle: the session's release in the inference thread and
 * glibc's returns go on for a second or two after it.
 */
async function idleReleased(context: WorkerContext): Promise<void> {
  for (let waited = 0; context.runtime.stats().idleReleases === 0 && waited < 3 * CHILD_IDLE_RELEASE_MS; waited += 200) await settle();
  let last = residentMiB();
  for (let waited = 0; waited < 10_000; waited += 500) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = residentMiB();
    if (Math.abs(now - last) < 1) return;
    last = now;
  }
}

/** Child: one workload in a fresh process; prints one JSON line. */
async function child(id: string): Promise<void> {
  const workload = WORKLOADS.find((candidate) => candidate.id === id)!;
  const context = await contextFor([workload.model], { ATELIER_MODEL_IDLE_RELEASE_MS: String(CHILD_IDLE_RELEASE_MS) });
  await settle();
  const before = residentMiB();
  const started = performance.now();
  await workload.run(context);
  const ms = Math.round(performance.now() - started);
  const after = residentMiB();
  const peak = peakMiB(context);
  const estimatedMiB = Math.round(context.runtime.stats().estimatedBytes / MiB);
  await idleReleased(context);
  const idle = residentMiB();
  const released = context.runtime.stats().loadedSessions === 0;
  await context.runtime.dispose();
  await settle();
  console.log(JSON.stringify({ before, after, peak, idle, released, disposed: residentMiB(), estimatedMiB, ms }));
}

/** Child for --allocator-timing: a warm call, then `runs` timed calls; prints their median in ms. */
async function timeChild(id: string, runs: number): Promise<void> {
  const workload = [...WORKLOADS, ...TIMED_WORKLOADS].find((candidate) => candidate.id === id)!;
  const context = await contextFor([workload.model]);
  await workload.run(context);
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    await workload.run(context);
    times.push(performance.now() - started);
  }
  await context.runtime.dispose();
  console.log(JSON.stringify({ ms: Math.round(median(times)), peak: Math.round(context.runtime.stats().peakResidentBytes / MiB) }));
}

/** Candidate malloc settings, timed against glibc's defaults ({} here). */
const ALLOCATOR_CANDIDATES: Record<string, Record<string, string>> = {
  "glibc defaults": {},
  "service (allocator-settings.ts)": ALLOCATOR_ENV,
  "mmap 1 MiB": { MALLOC_MMAP_THRESHOLD_: "1048576", MALLOC_ARENA_MAX: "2" },
  "mmap 4 MiB": { MALLOC_MMAP_THRESHOLD_: "4194304", MALLOC_ARENA_MAX: "2" },
  "mmap 16 MiB": { MALLOC_MMAP_THRESHOLD_: "16777216", MALLOC_ARENA_MAX: "2" },
};

async function allocatorTiming(rounds: number, only: string[] | undefined, settings: string[] | undefined): Promise<void> {
  const timed = TIMED_WORKLOADS.filter((workload) => !only || only.includes(workload.model));
  const names = Object.keys(ALLOCATOR_CANDIDATES).filter((name) => name === "glibc defaults" || !settings || settings.includes(name)).filter((name, index, all) => all.findIndex((other) => JSON.stringify(ALLOCATOR_CANDIDATES[other]) === JSON.stringify(ALLOCATOR_CANDIDATES[name])) === index);
  console.log(`\nCall time by malloc setting: ${rounds} rounds, settings alternating within each round, 3 calls per process after a warm one (load ${load()}):`);
  console.log("| workload | setting | median ms | median ratio to glibc defaults | peak MiB | load |\n|---|---|---:|---:|---:|---|");
  for (const workload of timed) {
    const times = new Map<string, number[]>(names.map((name) => [name, []]));
    const peaks = new Map<string, number[]>(names.map((name) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      // Alternate the order too, so a trend in the machine's load favours no setting.
      for (const name of round % 2 === 0 ? names : [...names].reverse()) {
        const env = { ...process.env };
        for (const variable of ["MALLOC_MMAP_THRESHOLD_", "MALLOC_ARENA_MAX", "MALLOC_TRIM_THRESHOLD_", ...Object.keys(ALLOCATOR_ENV)]) delete env[variable];
        Object.assign(env, ALLOCATOR_CANDIDATES[name]);
        const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--import", "tsx", "bench/model-memory.ts", "--time", workload.id], { timeout: 600_000, maxBuffer: 16 * MiB, env });
        const reading = JSON.parse(stdout.trim().split("\n").at(-1)!);
        times.get(name)!.push(reading.ms);
        peaks.get(name)!.push(reading.peak);
      }
    }
    const base = times.get(names[0]!)!;
    for (const name of names) {
      const ratios = times.get(name)!.map((ms, round) => ms / base[round]!);
      console.log(`| ${workload.id} | ${name} | ${median(times.get(name)!)} | ${median(ratios).toFixed(2)} | ${median(peaks.get(name)!)} | ${load()} |`);
    }
  }
}

/** The mixed-workload soak: steps in turn for `seconds`, resident memory sampled every second. */
async function soak(seconds: number): Promise<void> {
  const ids = ["isnet-general", "lsdir-compact-x4", "portrait-selfie", "esrgan-slim"];
  let context: WorkerContext;
  try {
    context = await contextFor(ids);
  } catch (error) {
    console.log(`(mixed workload skipped: ${(error as Error).message})`);
    return;
  }
  const steps = [removal("isnet-general", 1024), upscaling("lsdir-compact-x4", 256, 4), removal("portrait-selfie", 1024), upscaling("esrgan-slim", 128, 4)];
  const stats = () => context.runtime.stats();
  const baseline = residentMiB();
  const limitMiB = Math.round(stats().processLimitBytes / MiB);
  console.log(
    `\nMixed-workload soak in one process for ${seconds} s: ${steps.map((step) => step.id).join(", ")} in turn; ` +
      `budget ${Math.round(stats().budgetBytes / MiB)} MiB + margin = line ${limitMiB} MiB; baseline ${baseline} MiB (load ${load()})`,
  );
  console.log("| s | RSS MiB | peak so far | line | headroom | sessions | charged MiB | evictions | step |\n|---:|---:|---:|---:|---:|---|---:|---:|---|");
  let current = "";
  const started = performance.now();
  const sample = () => {
    const now = stats();
    const rss = Math.round(now.residentBytes / MiB);
    const names = now.sessions.map((session) => session.key.split("/")[0]).join(" ");
    console.log(
      `| ${Math.round((performance.now() - started) / 1000)} | ${rss} | ${Math.round(now.peakResidentBytes / MiB)} | ${limitMiB} | ${limitMiB - rss} | ${names} | ${Math.round(now.chargedBytes / MiB)} | ${now.evictions} | ${current} |`,
    );
  };
  const timer = setInterval(sample, 1000);
  let calls = 0;
  try {
    while (performance.now() - started < seconds * 1000) {
      const step = steps[calls++ % steps.length]!;
      current = step.id;
      await step.run(context);
    }
  } finally {
    clearInterval(timer);
  }
  sample();
  const end = stats();
  await context.runtime.dispose();
  await settle();
  const peak = Math.round(end.peakResidentBytes / MiB);
  console.log(
    `${calls} calls; peak ${peak} MiB (line ${limitMiB} MiB, ${peak <= limitMiB ? "under" : "OVER"} it by ${Math.abs(limitMiB - peak)} MiB); ` +
      `after releasing every model ${residentMiB()} MiB (baseline ${baseline} MiB); evictions ${end.evictions}`,
  );
  console.log("measured model costs (MiB: load growth, load peak, run peak over the resident size before the run; estimate; charged):");
  for (const session of end.sessions) {
    const m = session.measured;
    const f = (bytes: number | undefined) => (bytes === undefined ? "-" : Math.round(bytes / MiB));
    console.log(`  ${session.key}: ${f(m.loadBytes)}, ${f(m.loadPeakBytes)}, ${f(m.runPeakBytes)}; ${f(session.estimatedBytes)}; ${f(session.chargedBytes)}`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: "string" },
      time: { type: "string" },
      only: { type: "string" },
      "skip-mixed": { type: "boolean" },
      allocator: { type: "string", default: "both" },
      "mixed-only": { type: "boolean" },
      soak: { type: "string", default: "60" },
      "allocator-timing": { type: "string" },
      settings: { type: "string" },
    },
  });
  if (values.child) return child(values.child);
  if (values.time) return timeChild(values.time, 3);
  const soakSeconds = Number(values.soak);
  if (values["mixed-only"]) return soak(soakSeconds);
  const config = loadConfig({ ...process.env, LOG_LEVEL: "silent" });
  const budgetMiB = Math.round(config.inference.memoryBudgetBytes / MiB);
  console.log(`${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; node ${process.version}; load ${load()}`);
  console.log(`service configuration: ${config.inference.threads} onnxruntime threads, model budget ${budgetMiB} MiB\n`);
  console.log("| workload | what | malloc | RSS before | after call | peak (VmHWM) | after idle release | after dispose | budget estimate | ms | load |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
  const only = values.only?.split(",");
  if (values["allocator-timing"]) return allocatorTiming(Number(values["allocator-timing"]), only, values.settings?.split(","));
  const allocators = values.allocator === "both" ? ["tuned", "default"] : [values.allocator!];
  for (const workload of WORKLOADS.filter((candidate) => !only || only.includes(candidate.model))) {
    for (const allocator of allocators) {
      const env = { ...process.env };
      for (const name of Object.keys(ALLOCATOR_ENV)) delete env[name];
      if (allocator === "tuned") Object.assign(env, ALLOCATOR_ENV);
      try {
        const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--import", "tsx", "bench/model-memory.ts", "--child", workload.id], { timeout: 180_000, maxBuffer: 16 * MiB, env });
        const r = JSON.parse(stdout.trim().split("\n").at(-1)!);
        console.log(`| ${workload.id} | ${workload.describe} | ${allocator} | ${r.before} | ${r.after} | ${r.peak} | ${r.idle}${r.released ? "" : " (model kept)"} | ${r.disposed} | ${r.estimatedMiB} | ${r.ms} | ${load()} |`);
        if (workload === ISNET_GOAL.workload && allocator === "tuned") {
          reportGoal({ goal: `ISNet at 1 MP: whole-process peak under 1.2 GB (${ISNET_GOAL.limitMiB} MiB)`, measured: `${r.peak} MiB`, met: r.peak < ISNET_GOAL.limitMiB });
          const kept = r.idle - r.before;
          reportGoal({
            goal: `ISNet released when idle: whole process back within 100 MB (${ISNET_GOAL.keptMiB} MiB) of its idle figure`,
            measured: r.released ? `${kept} MiB over idle (${r.idle} MiB after the idle release, ${r.before} MiB idle)` : "ISNet was not released",
            met: r.released && kept <= ISNET_GOAL.keptMiB,
          });
        }
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
    const { status } = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", "bench/model-memory.ts", "--mixed-only", "--soak", String(soakSeconds)], { stdio: "inherit", env });
    process.exitCode = status ?? 1;
    return;
  }
  await soak(soakSeconds);
}

try {
  await main();
} finally {
  removeBenchModelsDir();
}
