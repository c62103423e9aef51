/**
 * Loads every installed ONNX model into one ModelRuntime and reports what each costs in resident
 * memory, next to the runtime's estimate, so the estimate (workers/onnx/session-cost.ts) and the
 * budget can be checked on a real machine.
 *
 *   npx tsx --expose-gc bench/model-memory.ts [model.onnx …]
 *
 * Without arguments it takes every `*.onnx` under ATELIER_MODELS_DIR when that holds any, else under
 * the model mirror (ATELIER_MODEL_MIRROR). Budget: ATELIER_MODEL_MEMORY_MB (default 1024). Each model
 * runs once on zeros shaped from its own metadata: a symbolic first axis (batch) becomes 1, any other
 * symbolic axis 64. `--expose-gc` makes the resident figures steadier; it is optional.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../core/config.js";
import { modelMirror } from "../test/support/test-assets.js";
import { ModelRuntime, type RuntimeLogger, type TensorMap, type TensorSignature } from "../workers/onnx/onnx-runtime.js";
import { elementCount } from "../workers/onnx/tensor-data.js";

const MiB = 1024 * 1024;
const SYMBOLIC_SIZE = 64;

function onnxFilesUnder(folder: string): string[] {
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".onnx"))
    .map((name) => path.join(folder, name))
    .sort();
}

function modelPaths(): { folder: string; files: string[] } {
  const given = process.argv.slice(2);
  if (given.length > 0) return { folder: process.cwd(), files: given.map((file) => path.resolve(file)) };
  const config = loadConfig();
  const installed = onnxFilesUnder(config.modelsDir);
  if (installed.length > 0) return { folder: config.modelsDir, files: installed };
  return { folder: modelMirror, files: onnxFilesUnder(modelMirror) };
}

/** Zeros shaped like each input; undefined when an input is not float32 (this runtime feeds float32 only). */
function zeroFeeds(inputs: TensorSignature[]): TensorMap | undefined {
  const feeds: TensorMap = {};
  for (const input of inputs) {
    if (input.type !== "float32") return undefined;
    const dims = input.shape.map((dim, axis) => (typeof dim === "number" && dim >= 0 ? dim : axis === 0 ? 1 : SYMBOLIC_SIZE));
    feeds[input.name] = { data: new Float32Array(elementCount(dims)), dims };
  }
  return feeds;
}

function residentMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss / MiB;
}

const mb = (value: number) => value.toFixed(1);

async function main(): Promise<void> {
  const budgetMiB = Number(process.env.ATELIER_MODEL_MEMORY_MB ?? 1024);
  if (!(budgetMiB > 0)) throw new Error(`Expected a positive number for ATELIER_MODEL_MEMORY_MB but received ${process.env.ATELIER_MODEL_MEMORY_MB}`);
  const { folder, files } = modelPaths();
  if (files.length === 0) {
    console.log(`No ONNX models found (looked under ${folder}).`);
    return;
  }
  const warnings: string[] = [];
  const logger: RuntimeLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (details, message) => warnings.push(`${message} ${JSON.stringify(details)}`),
  };
  const threads = Math.max(1, Math.min(4, os.availableParallelism()));
  const runtime = new ModelRuntime({ threads, memoryBudgetBytes: budgetMiB * MiB, logger });
  const baseline = residentMiB();
  console.log(`${files.length} models under ${folder}; budget ${budgetMiB} MiB; ${threads} threads per session; baseline RSS ${mb(baseline)} MiB\n`);

  const header = ["model", "file MiB", "est. MiB", "RSS load", "+load", "RSS run", "+run", "run ms", "evicted"];
  const rows: string[][] = [];
  for (const file of files) {
    const key = path.relative(folder, file);
    const model = runtime.model(key, () => fs.promises.readFile(file));
    const evictionsBefore = runtime.stats().evictions;
    const before = residentMiB();
    let row: string[];
    try {
      const signature = await model.signature();
      const loaded = residentMiB();
      const session = runtime.stats().sessions.find((s) => s.key === key)!;
      const feeds = zeroFeeds(signature.inputs);
      let ran = "n/a";
      let afterRun = loaded;
      if (feeds) {
        const started = performance.now();
        await model.run(feeds);
        ran = (performance.now() - started).toFixed(0);
        afterRun = residentMiB();
      }
      row = [
        key,
        mb(session.modelBytes / MiB),
        mb(session.estimatedBytes / MiB),
        mb(loaded),
        mb(loaded - before),
        mb(afterRun),
        mb(afterRun - loaded),
        ran,
        String(runtime.stats().evictions - evictionsBefore),
      ];
    } catch (error) {
      row = [key, "-", "-", "-", "-", "-", "-", "-", `failed: ${error instanceof Error ? error.message : String(error)}`];
    }
    rows.push(row);
    console.log(row.join("  "));
  }

  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  console.log(`\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${rows.map(line).join("\n")}`);

  const stats = runtime.stats();
  const total = residentMiB();
  console.log(
    `\n${stats.loadedSessions} of ${files.length} sessions loaded, estimated ${mb(stats.estimatedBytes / MiB)} MiB of a ${budgetMiB} MiB budget; ` +
      `${stats.evictions} evictions. RSS ${mb(total)} MiB (${mb(total - baseline)} MiB over the ${mb(baseline)} MiB baseline).`,
  );
  for (const warning of warnings) console.log(`warning: ${warning}`);
  await runtime.dispose();
  console.log(`After dispose: RSS ${mb(residentMiB())} MiB.`);
}

await main();
