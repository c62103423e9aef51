/**
 * onnxruntime's intra-op threads with and without busy-waiting after each run
 * (`session.intra_op.allow_spinning`, the ATELIER_ONNX_SPINNING setting), interleaved in one process:
 *
 * - bare: the same graph in two bare sessions that differ only in that option, run in turns; wall time
 *   of each run, then of a fixed JavaScript loop right after it (the kind of step the service runs
 *   next, which spinning threads compete with), and the process CPU of both plus a 5 ms pause;
 * - rest: two services in this process (each with its own worker), one per setting, taking turns at
 *   `POST /api/v1/tools/background-remove` of a 1 MP JPEG with each portrait model (the performance
 *   150 ms goal); wall time and process CPU per call (every thread: REST facade, router, worker and
 *   this client), and the cutouts must be byte-identical.
 *
 *   npx tsx bench/onnx-spinning.ts [--runs N] [--skip-bare] [--skip-rest]
 *
 * Needs the model mirror (ATELIER_MODEL_MIRROR, or /work/shared/models) and the test photographs.
 */
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import ort from "onnxruntime-node";
import sharp from "sharp";
import { loadConfig, type AtelierConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { startAtelier } from "../bin/start-atelier.js";
import { buildComposite, PERSON } from "../test/background/ground-truth.js";
import { installedModelsDir, removeBenchModelsDir } from "../test/support/installed-models.js";
import { loadAverage as load, median } from "./support/figures.js";

const { values } = parseArgs({ options: { runs: { type: "string" }, "skip-bare": { type: "boolean" }, "skip-rest": { type: "boolean" } } });
const RUNS = Number(values.runs ?? 15);
const MIRROR = process.env.ATELIER_MODEL_MIRROR ?? "/work/shared/models";
const SETTINGS = [
  ["spinning", true],
  ["no spinning", false],
] as const;

const table = (header: string[], rows: (string | number)[][]) =>
  [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");
/** CPU time of the whole process (every thread) while `work` runs, and its wall time, in ms. */
async function measure(work: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

async function bare(): Promise<void> {
  const graphs: [string, string, number[]][] = [
    ["portrait-selfie", "portrait-seg-mediapipe-selfie/selfie_segmentation.onnx", [1, 256, 256, 3]],
    ["portrait-sinet", "portrait-seg-sinet/SINet_Softmax.onnx", [1, 3, 320, 320]],
    ["LSDIR compact x4, 256x256", "superres-lsdir-compact-x4/4xLSDIRCompactC3_fp32.onnx", [1, 3, 256, 256]],
  ];
  const threads = loadConfig({ ...process.env }).inference.threads;
  const base = { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: "sequential", graphOptimizationLevel: "all", logSeverityLevel: 3 } as const;
  const rows: (string | number)[][] = [];
  for (const [name, file, dims] of graphs) {
    const sessions = await Promise.all(
      SETTINGS.map(([, spinning]) =>
        ort.InferenceSession.create(path.join(MIRROR, file), spinning ? base : { ...base, extra: { session: { intra_op: { allow_spinning: "0" } } } }),
      ),
    );
    const feeds = { [sessions[0]!.inputNames[0]!]: new ort.Tensor("float32", new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(0.5), dims) };
    for (const session of sessions) await session.run(feeds);
    const figures = SETTINGS.map(() => ({ run: [] as number[], after: [] as number[], cpu: [] as number[] }));
    for (let i = 0; i < RUNS; i++) {
      for (const [index, session] of sessions.entries()) {
        const cpu = process.cpuUsage();
        const run = await measure(() => session.run(feeds));
        const after = await measure(async () => {
          let sum = 0;
          for (let k = 0; k < 3e6; k++) sum += Math.sqrt(k);
          return sum;
        });
        await new Promise((resolve) => setTimeout(resolve, 5));
        const used = process.cpuUsage(cpu);
        figures[index]!.run.push(run.wall);
        figures[index]!.after.push(after.wall);
        figures[index]!.cpu.push((used.user + used.system) / 1000);
      }
    }
    rows.push([name, ...figures.flatMap((f) => [median(f.run).toFixed(1), median(f.after).toFixed(1), median(f.cpu).toFixed(1)])]);
  }
  console.log(`\n## Bare sessions, ${threads} intra-op threads (medians of ${RUNS} interleaved runs; load average now ${load()})\n`);
  console.log(table(["graph", ...SETTINGS.flatMap(([label]) => [`run ms, ${label}`, `JS after ms, ${label}`, `CPU ms, ${label}`])], rows));
}

/** A service whose worker runs in this process with `spinning`; returns its URL, an API key and a closer. */
async function service(config: AtelierConfig, spinning: boolean) {
  const own = { ...config, inference: { ...config.inference, spinning } };
  const running = await startAtelier(own, createLogger("silent"));
  const { key } = await running.services.keys.create({ name: "bench", hourlyLimit: 1_000_000 });
  return {
    url: running.url,
    key,
    close: () => running.close(),
  };
}

async function rest(): Promise<void> {
  const modelsDir = await installedModelsDir(["portrait-selfie", "portrait-sinet"]);
  const config = loadConfig({ ...process.env, ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent", PORT: "0", ATELIER_METRICS_PORT: "0" });
  const services = [];
  for (const [, spinning] of SETTINGS) services.push(await service(config, spinning));
  const person = await buildComposite(PERSON, "rocket.jpg");
  const jpeg = await sharp(person.png).resize(1224, 816, { kernel: "lanczos3" }).jpeg({ quality: 90 }).toBuffer();
  const rows: (string | number)[][] = [];
  try {
    for (const model of ["portrait-selfie", "portrait-sinet"]) {
      const body = JSON.stringify({ imageUrl: `data:image/jpeg;base64,${jpeg.toString("base64")}`, model });
      const outputs = new Set<string>();
      const call = (target: { url: string; key: string }) => async () => {
        const response = await fetch(`${target.url}/api/v1/tools/background-remove`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${target.key}` },
          body,
        });
        const json = (await response.json()) as { data?: { url: string }[]; message?: string };
        if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${json.message}`);
        outputs.add(json.data![0]!.url);
      };
      for (const target of services) for (let i = 0; i < 2; i++) await call(target)();
      const figures = SETTINGS.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
      for (let i = 0; i < RUNS; i++) {
        for (const [index, target] of services.entries()) {
          const { wall, cpu } = await measure(call(target));
          figures[index]!.wall.push(wall);
          figures[index]!.cpu.push(cpu);
        }
      }
      if (outputs.size !== 1) throw new Error(`${model}: the cutouts differ between the settings (${outputs.size} distinct)`);
      rows.push([model, ...figures.flatMap((f) => [median(f.wall).toFixed(0), median(f.cpu).toFixed(0)])]);
    }
  } finally {
    for (const target of services) await target.close();
  }
  console.log(`\n## REST background removal, 1 MP JPEG in, PNG cutout out (medians of ${RUNS} interleaved calls; cutouts identical; load average now ${load()})\n`);
  console.log(table(["model", ...SETTINGS.flatMap(([label]) => [`wall ms, ${label}`, `CPU ms, ${label}`])], rows));
}

console.log(`# bench/onnx-spinning.ts — ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load average ${load()}, node ${process.version}`);
try {
  if (!values["skip-bare"]) await bare();
  if (!values["skip-rest"]) await rest();
} finally {
  removeBenchModelsDir();
}
console.log(`\nload average at the end: ${load()}`);
