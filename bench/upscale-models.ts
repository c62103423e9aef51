/**
 * The upscaling benchmark's access to models: a ModelRuntime and ModelLoader like a worker's, over a
 * models folder that holds the mirror-installed ones (ATELIER_MODELS_DIR when it has them, else a
 * temporary folder pulled from ATELIER_MODEL_MIRROR), and a plain-text table printer.
 */
import os from "node:os";
import { loadConfig } from "../core/config.js";
import { modelMirror } from "../test/support/test-assets.js";
import { installedModelsDir } from "../test/support/installed-models.js";
import { catalogEntry } from "../models/catalog/model-catalog.js";
import type { CatalogEntry } from "../models/catalog/catalog-types.js";
import { modelConverters } from "../models/convert/model-converters.js";
import { pullModel } from "../models/store/model-installer.js";
import { ModelLoader } from "../workers/model-loader.js";
import { ModelStore } from "../models/store/model-store.js";
import { ModelRuntime } from "../workers/onnx/onnx-runtime.js";
import { appendReport } from "./support/bench-report.js";

export interface BenchModels {
  modelsDir: string;
  runtime: ModelRuntime;
  models: ModelLoader;
  threads: number;
  /** Upscale entries that can run here, in catalog order. */
  usable: CatalogEntry[];
}

const quiet = { debug() {}, info() {}, warn() {} };

/** Installs what the mirror has of `ids` (ignoring the ones it lacks) and opens a runtime over them. */
export async function benchModels(ids: string[]): Promise<BenchModels> {
  const config = loadConfig();
  // The benchmark removes a folder made here with removeBenchModelsDir() when it ends.
  const modelsDir = process.env.ATELIER_MODELS_DIR ? config.modelsDir : await installedModelsDir([]);
  const store = new ModelStore(modelsDir);
  for (const id of ids) {
    const entry = catalogEntry(id)!;
    if (entry.source.kind !== "files" || store.isInstalled(entry)) continue;
    try {
      await pullModel(entry, store, { from: modelMirror, converters: modelConverters });
    } catch (error) {
      console.warn(`[bench] ${id} not installed: ${(error as Error).message}`);
    }
  }
  const models = new ModelLoader(store, { disableNonCommercial: false });
  const threads = config.inference.threads;
  const runtime = new ModelRuntime({ threads, memoryBudgetBytes: config.inference.memoryBudgetBytes, logger: quiet });
  const usable = ids.map((id) => catalogEntry(id)!).filter((entry) => models.isUsable(entry));
  return { modelsDir, runtime, models, threads, usable };
}

/** Prints rows as an aligned Markdown table (numbers right-aligned). */
/** The machine, for tables measured on it: CPU model and cores. */
export function machine(): string {
  return `${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}`;
}

/** Prints a Markdown table; with `report`, also gives it to docs/benchmarks.md as the section of that title (bench/support/bench-report.ts). */
export function printTable(title: string, header: string[], rows: (string | number)[][], report?: string): void {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, c) => Math.max(...cells.map((row) => row[c]!.length)));
  const numeric = header.map((_, c) => rows.length > 0 && rows.every((row) => /^[-+]?[\d.,]+( ?[a-z%/]*)?$|^—$/.test(String(row[c]))));
  const line = (row: string[]) => `| ${row.map((cell, c) => (numeric[c] ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join(" | ")} |`;
  console.log(`\n### ${title}\n`);
  console.log(line(header));
  console.log(`|${widths.map((w, c) => (numeric[c] ? `${"-".repeat(w + 1)}:` : `${"-".repeat(w + 2)}`)).join("|")}|`);
  for (const row of cells.slice(1)) console.log(line(row));
  if (report) appendReport(report, [title, "", line(header), `|${widths.map(() => "---").join("|")}|`, ...cells.slice(1).map(line)].join("\n"));
}

/** Median of a non-empty list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
