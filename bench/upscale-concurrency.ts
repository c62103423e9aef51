/**
 * Upscaling under concurrency: the REST service against bare onnxruntime sessions, N clients at once.
 *
 *   npx tsx bench/upscale-concurrency.ts [--levels 1,2,4,8] [--window-s 7] [--rounds 2] [--tail-calls 100] [--details FILE]
 *
 * The REST side: a whole Atelier started in this process (test/support/test-service.ts: npm start's
 * defaults for the worker's concurrency and queue and onnxruntime's threads and spinning; its
 * background warm-up off, since this bench warms the model with a call of its own), called over real
 * HTTP on 127.0.0.1 by N clients in this process: POST /api/v1/tools/upscale with a PNG data URL of a
 * 256x256 photo crop, model lsdir-compact-x4, x4, a 1 MP PNG out. A client checks each answer's status
 * and reads its body, counting its bytes without keeping or decoding it (bench/support/counted-http.ts):
 * the clients share the service's cores, and what they do is not the service's cost.
 *
 * The bare side, the anchor: what a user of onnxruntime-node who wants N calls at once would run,
 * the same graph in a session with onnxruntime's default options (none given: every core, spinning
 * threads), one session per client, each in its own worker thread (bench/support/bare-session-client.mjs;
 * onnxruntime-node runs a session synchronously on the calling thread, so one shared session would
 * serialise the calls: concurrency 1's throughput, and a p99 of about N runs), each running the whole
 * image as one tensor already made, with no decoding, encoding or HTTP.
 *
 * The third side, the contract floor: those same bare sessions inside the least server of the contract
 * (bench/support/contract-floor.ts), called by N clients as REST is, with the same body. Each call is
 * parsed, its PNG decoded, its pixels handed to a free bare session's thread, which makes the tensor,
 * runs it and turns the output back into bytes, and the answer encoded with the service's PNG encoder
 * and sent as a data URL in JSON. It is what any server of the contract pays on these cores around
 * onnxruntime's default sessions: where the floor's own throughput is under 0.95x the bare one's, or
 * its p99 over the bare p99, no server of the contract meets that goal at that level, and the goal's
 * row says so; REST / floor is then what the service itself costs.
 *
 * Each client calls back to back, starting a call only while the window has not passed; a side's
 * throughput is its window's calls over the window's wall time (from the clients' start to the last
 * call's end), averaged over the rounds. Every side is busy for all of it: the service queues the
 * calls and runs them one after another, the bare sessions (alone or in the floor) run together and
 * end about together. A
 * sum over clients of each one's calls over its own busy time would not do: the service answers
 * queued clients in turn, so their busy times are staggered, and a client whose last call ended early
 * leaves the service to the others, whose calls then wait less, and each rate counts that.
 * Per level, each round starts with the next side in turn, so a load that drifts weighs on all alike;
 * after `--rounds`, a level takes more rounds until each side has made `--tail-calls` calls, so that
 * its p99 is a percentile rather than its slowest call. p50 and p99 are of every call of the level's
 * rounds, by nearest rank. CPU per call is this process's CPU time over a side's windows (the service and
 * its clients, or the bare sessions with their spinning) over its calls: the figure a busy machine
 * disturbs least. The service's model run is its inference metric's mean over the REST windows (the
 * inference thread's run, transfers included): REST's p50 at one client minus it is what the call adds
 * around the run. --details appends each window's calls, in order, to FILE as a JSON line.
 *
 * Goals: REST ≥ 0.95x the bare throughput at every level, and REST's p99 at most the bare one's at
 * every level (each row with the contract floor's own figure where that is already past the bound).
 * At this size the service runs the whole image as one tile (its tile is 384 px), so REST and bare
 * run the same network once per call, the service's graph with its pixel conversions inside (bytes
 * in, cast and transposed; out scaled, clamped, rounded, cast and transposed back to interleaved
 * bytes: byte-image-graph.ts), the bare one on floats in and out, converting nothing; the
 * service queues calls beyond its worker's concurrency and lets one run at a time into the session,
 * in the order the calls came, while the bare sessions run all N at once on the same cores.
 *
 * Where REST can trail: with one client, nothing overlaps a call's own work around its model run (the
 * request's base64 and PNG decoding, the tensors in and out, the PNG encoding, base64 and JSON of a
 * 1 MP answer, HTTP both ways) with a run, so REST's latency there is the service's run plus that
 * work, none of which the bare side does: REST / bare at one client is about run / (run + that work)
 * unless the service's run is the faster one. The table shows both parts: the service's mean run
 * beside REST's p50. From two clients on, the worker's second slot does one call's work while the
 * other call runs the model; that work takes a core from the run's two threads, which meet at the end
 * of every operator, so the run slows by about as much as the work takes (the mean run grows with the
 * clients) rather than hiding it.
 *
 * The tails differ in kind: a REST call waits for the runs of the calls ahead of it, one after
 * another, so one slow run (a busy machine's hiccup) delays every call queued behind it by all of it,
 * while the bare sessions share the cores and a hiccup slows all N runs by a share of it. With fewer
 * than 100 calls a level, the p99 would be a single call, so one such hiccup could decide a level's
 * tail row: hence `--tail-calls`.
 *
 * LSDIR comes from the model mirror (ATELIER_MODEL_MIRROR) or ATELIER_MODELS_DIR with it installed;
 * the photograph from scripts/fetch-test-photos.sh (data/test-photos).
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import sharp from "sharp";
import { catalogEntry } from "../models/catalog/model-catalog.js";
import { upscalePath } from "../models/requests/upscale-choice.js";
import { startTestService, type TestService } from "../test/support/test-service.js";
import { dataUrl } from "../test/support/test-images.js";
import { testPhoto } from "../test/support/test-assets.js";
import { imageToTensor } from "../workers/image/image-tensor.js";
import { imageTiling } from "../workers/upscale/network-upscaler.js";
import { inferenceDuration } from "../observability/metrics.js";
import { postCounted } from "./support/counted-http.js";
import { reportGoal } from "./support/goal-rows.js";
import { startContractFloor } from "./support/contract-floor.js";
import { encodeImage } from "../workers/image/encode-image.js";
import { OutputFormat } from "../gen/atelier/image/v1/image.js";
import type { RawImage } from "../workers/image/raw-image.js";
import { benchModels, machine, median, printTable } from "./upscale-models.js";
import { centreCrop } from "./upscale-quality.js";
import { loadAverage as load } from "./support/figures.js";
import { removeBenchModelsDir } from "../test/support/installed-models.js";

const MODEL = "lsdir-compact-x4";
const SCALE = 4;
/** 256 px in, 1024 px (1 MP) out: a call of a few hundred milliseconds on 2 cores. */
const CROP = 256;
const MIN_THROUGHPUT_RATIO = 0.95;
const BARE_CLIENT = path.join(import.meta.dirname, "support", "bare-session-client.mjs");

const { values } = parseArgs({
  options: {
    levels: { type: "string", default: "1,2,4,8" },
    "window-s": { type: "string", default: "7" },
    rounds: { type: "string", default: "2" },
    /** Calls each side makes at least at each level: a nearest-rank p99 of fewer is the slowest call. */
    "tail-calls": { type: "string", default: "100" },
    /** A file to append each window's calls to, one JSON line per window. */
    details: { type: "string" },
  },
});
const levels = values.levels.split(",").map(Number);
const windowMs = Number(values["window-s"]) * 1000;
const rounds = Number(values.rounds);
const tailCalls = Number(values["tail-calls"]);

/** One client's part of a window: each call's latency, and its time from the first call's start to the last one's end. */
interface ClientWindow {
  latencies: number[];
  busyMs: number;
}

/** Everything one side did at one level, over the rounds. */
interface SideLevel {
  name: "REST" | "bare" | "floor";
  latencies: number[];
  /** Calls per second of each round. */
  throughputs: number[];
  /** CPU time of this process (every thread: the service, its clients, the bare sessions) over the side's windows. */
  cpuMs: number;
  /** The service's model runs in the side's windows (its inference metric; none on the bare side) and their time. */
  serviceRuns: number;
  serviceRunMs: number;
}

const newSide = (name: SideLevel["name"]): SideLevel => ({ name, latencies: [], throughputs: [], cpuMs: 0, serviceRuns: 0, serviceRunMs: 0 });

/** The service's model runs so far and their time (atelier_inference_duration_seconds, every model). */
async function serviceInference(): Promise<{ runs: number; ms: number }> {
  const { values: series } = await inferenceDuration.get();
  const total = (suffix: string) => series.filter((value) => value.metricName?.endsWith(suffix)).reduce((sum, value) => sum + value.value, 0);
  return { runs: total("_count"), ms: total("_sum") * 1000 };
}

/** Runs one side's window (its clients all at once) and adds what they did to `side`; with --details, one JSON line per window. */
async function measureWindow(side: SideLevel, level: number, round: number, clients: () => Promise<ClientWindow[]>): Promise<void> {
  const cpuBefore = process.cpuUsage();
  const inferenceBefore = await serviceInference();
  const began = performance.now();
  const windows = await clients();
  const wallMs = performance.now() - began;
  const cpu = process.cpuUsage(cpuBefore);
  const inferenceAfter = await serviceInference();
  side.cpuMs += (cpu.user + cpu.system) / 1000;
  side.serviceRuns += inferenceAfter.runs - inferenceBefore.runs;
  side.serviceRunMs += inferenceAfter.ms - inferenceBefore.ms;
  for (const client of windows) side.latencies.push(...client.latencies);
  side.throughputs.push((windows.reduce((sum, client) => sum + client.latencies.length, 0) / wallMs) * 1000);
  if (values.details) fs.appendFileSync(values.details, `${JSON.stringify({ level, side: side.name, round, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, load: load(), clients: windows })}\n`);
}

/** Nearest-rank percentile of a non-empty list. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** One client of the REST or contract-floor side for one window, calling back to back. */
async function backToBackClient(call: () => Promise<void>): Promise<ClientWindow> {
  const latencies: number[] = [];
  const started = performance.now();
  while (performance.now() - started < windowMs) {
    const callStarted = performance.now();
    await call();
    latencies.push(performance.now() - callStarted);
  }
  return { latencies, busyMs: performance.now() - started };
}

/** A bare client's worker thread, warm, answering one window or one contract-floor call at a time. */
interface BareClient {
  window(): Promise<ClientWindow>;
  /** One call's network work on `image` (interleaved RGB), its output as interleaved RGB. */
  infer(image: RawImage): Promise<RawImage>;
  close(): Promise<void>;
}

async function startBareClient(graph: Uint8Array, inputName: string, input: Float32Array, dims: readonly number[]): Promise<BareClient> {
  const worker = new Worker(BARE_CLIENT, { workerData: { graph, inputName, input, dims: [...dims] } });
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      const fail = (error: unknown) => {
        worker.off("message", answer);
        reject(error instanceof Error ? error : new Error(String(error)));
      };
      const answer = (message: unknown) => {
        worker.off("error", fail);
        resolve(message);
      };
      worker.once("message", answer);
      worker.once("error", fail);
    });
  const ready = (await next()) as { outputDims: number[] };
  const expected = [1, 3, CROP * SCALE, CROP * SCALE];
  if (ready.outputDims.join("x") !== expected.join("x")) {
    await worker.terminate();
    throw new Error(`bare session answered ${ready.outputDims.join("x")}, expected ${expected.join("x")}`);
  }
  return {
    window: async () => {
      const answered = next();
      worker.postMessage({ windowMs });
      return (await answered) as ClientWindow;
    },
    infer: async (image) => {
      const answered = next();
      worker.postMessage({ infer: { data: image.data, width: image.width, height: image.height } });
      const output = (await answered) as { data: Uint8Array; width: number; height: number };
      return { ...output, channels: 3 };
    },
    close: async () => {
      const exited = new Promise((resolve) => worker.once("exit", resolve));
      worker.postMessage({ close: true });
      await exited;
    },
  };
}

async function restCall(service: TestService, key: string, body: string): Promise<void> {
  const answer = await postCounted(`${service.url}/api/v1/tools/upscale`, body, { authorization: `Bearer ${key}` });
  if (answer.status !== 200) throw new Error(`POST /tools/upscale answered ${answer.status}: ${answer.text}`);
}

const entry = catalogEntry(MODEL)!;
// The floor's bare clients convert pixels to this format and back themselves (bare-session-client.mjs).
const format = entry.imageFormat;
if (format?.layout !== "NCHW" || format.channelOrder !== "RGB" || format.range.join() !== "0,1" || format.mean || format.std) {
  throw new Error(`${MODEL}'s image format is not the NCHW RGB 0..1 the floor's bare clients make: ${JSON.stringify(format)}`);
}
const bench = await benchModels([MODEL]);
if (!bench.usable.includes(entry)) throw new Error(`${MODEL} is not installed: set ATELIER_MODEL_MIRROR (or ATELIER_MODELS_DIR with it installed).`);
const image = await centreCrop(testPhoto("chelsea.png"), CROP);
const png = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } }).png().toBuffer();
const body = JSON.stringify({ imageUrl: dataUrl(png), scale: SCALE, model: MODEL });
const tiling = imageTiling(entry, SCALE, image);
const tiles = tiling.tileSize !== undefined && tiling.tileSize >= Math.max(image.width, image.height) ? "the whole image as one tile" : `${tiling.tileSize} px tiles overlapping by ${tiling.tileOverlap ?? 0} px`;

const loadBefore = load();
console.log(`Upscaling under concurrency, ${new Date().toISOString()}: ${machine()}, load average ${loadBefore}; levels ${levels.join(", ")}, ${windowMs / 1000} s windows, at least ${rounds} rounds and ${tailCalls} calls a side per level`);
const service = await startTestService({ ATELIER_MODELS_DIR: bench.modelsDir });
const bare: BareClient[] = [];
// The bare clients the contract floor may hand a call to at the current level; a call takes one and gives it back.
let floorClients: BareClient[] = [];
const floor = await startContractFloor(async (request) => {
  const client = floorClients.pop();
  if (!client) throw new Error("contract floor: more calls at once than clients");
  try {
    return await encodeImage(await client.infer(request), OutputFormat.OUTPUT_FORMAT_PNG);
  } finally {
    floorClients.push(client);
  }
});
const floorCall = async () => {
  const answer = await postCounted(floor.url, body);
  if (answer.status !== 200) throw new Error(`contract floor answered ${answer.status}: ${answer.text}`);
};
const rows: (string | number)[][] = [];
const results: { level: number; rest: SideLevel; bare: SideLevel; floor: SideLevel }[] = [];
try {
  // A key without the default hourly limit: a level makes 200 calls or more.
  const key = await service.createKey("bench", 1_000_000);
  // The first call loads and warms the service's session, and shows what it ran.
  const first = await service.post("/tools/upscale", body, key);
  const answer = (await first.json()) as { model?: string; steps?: string[]; data?: { width?: number }[] };
  if (first.status !== 200 || answer.model !== MODEL || answer.data?.[0]?.width !== CROP * SCALE) throw new Error(`first call: HTTP ${first.status} ${JSON.stringify(answer).slice(0, 500)}`);
  const graph = await bench.models.graphLoader(entry, `x${upscalePath(entry, SCALE)!.nativeScale}`)();
  const tensor = imageToTensor(image, entry.imageFormat!);
  const inputName = entry.signature!.inputs[0]!.name;
  // Every bare client's session is made and warmed before any timing, all at once.
  const started = await Promise.allSettled(Array.from({ length: Math.max(...levels) }, () => startBareClient(graph, inputName, tensor.data, tensor.dims)));
  for (const client of started) if (client.status === "fulfilled") bare.push(client.value);
  const failed = started.find((client) => client.status === "rejected");
  if (failed) throw failed.reason;

  // The floor's first call, untimed: its server's and client's code warm, as the service's is.
  floorClients = bare.slice(0, 1);
  await floorCall();

  for (const level of levels) {
    const rest = newSide("REST");
    const anchor = newSide("bare");
    const contractFloor = newSide("floor");
    floorClients = bare.slice(0, level);
    const clientsOf = (call: () => Promise<void>) => () => Promise.all(Array.from({ length: level }, () => backToBackClient(call)));
    const runRest = (round: number) => measureWindow(rest, level, round, clientsOf(() => restCall(service, key, body)));
    const runBare = (round: number) => measureWindow(anchor, level, round, () => Promise.all(bare.slice(0, level).map((client) => client.window())));
    const runFloor = (round: number) => measureWindow(contractFloor, level, round, clientsOf(floorCall));
    const sides = [runRest, runBare, runFloor];
    let round = 0;
    for (; round < rounds || Math.min(rest.latencies.length, anchor.latencies.length, contractFloor.latencies.length) < tailCalls; round++) {
      // Each round starts with the next side, so each goes first, second and third alike.
      for (let turn = 0; turn < sides.length; turn++) await sides[(round + turn) % sides.length]!(round);
    }
    results.push({ level, rest, bare: anchor, floor: contractFloor });
    const restThroughput = mean(rest.throughputs);
    const bareThroughput = mean(anchor.throughputs);
    const floorThroughput = mean(contractFloor.throughputs);
    const restP99 = percentile(rest.latencies, 99);
    const bareP99 = percentile(anchor.latencies, 99);
    const floorP99 = percentile(contractFloor.latencies, 99);
    rows.push([
      level,
      restThroughput.toFixed(2),
      bareThroughput.toFixed(2),
      `${(restThroughput / bareThroughput).toFixed(3)}x`,
      Math.round(median(rest.latencies)),
      Math.round(restP99),
      Math.round(median(anchor.latencies)),
      Math.round(bareP99),
      `${(restP99 / bareP99).toFixed(2)}x`,
      floorThroughput.toFixed(2),
      `${(floorThroughput / bareThroughput).toFixed(3)}x`,
      `${(restThroughput / floorThroughput).toFixed(3)}x`,
      Math.round(floorP99),
      `${(floorP99 / bareP99).toFixed(2)}x`,
      `${rest.latencies.length} / ${anchor.latencies.length} / ${contractFloor.latencies.length} in ${round} rounds`,
      `${Math.round(rest.cpuMs / rest.latencies.length)} / ${Math.round(anchor.cpuMs / anchor.latencies.length)} / ${Math.round(contractFloor.cpuMs / contractFloor.latencies.length)}`,
      rest.serviceRuns > 0 ? Math.round(rest.serviceRunMs / rest.serviceRuns) : "—",
      load(),
    ]);
    console.log(
      `concurrency ${level}: REST ${restThroughput.toFixed(2)} calls/s, bare ${bareThroughput.toFixed(2)}, floor ${floorThroughput.toFixed(2)}; p99 ${Math.round(restP99)} / ${Math.round(bareP99)} / ${Math.round(floorP99)} ms (load ${load()})`,
    );
  }
} finally {
  await floor.close();
  await Promise.all(bare.map((client) => client.close()));
  await service.close();
  await bench.runtime.dispose();
}

const { workers, inference } = service.config;
printTable(
  `Upscaling under concurrency: REST (POST /api/v1/tools/upscale, ${MODEL} x${SCALE}, a ${CROP}x${CROP} crop of chelsea.png as a PNG data URL, a ${((CROP * SCALE) ** 2 / 1e6).toFixed(1)} MP PNG out; ` +
    `the service tiles it (here ${tiles}) and runs ${workers.concurrency} calls at once, one inference at a time per session, ${inference.threads} onnxruntime threads, no spinning) ` +
    `against bare onnxruntime sessions with onnxruntime's default options, one per client in its own worker thread, each running the whole image in one run on a tensor already made; ` +
    `and against the contract floor: those bare sessions inside a bare HTTP server of the contract (JSON, base64, PNG decode, the tensor made and the output turned to bytes in the session's thread, the service's PNG encoder), called as REST is; ` +
    `N clients calling back to back for ${windowMs / 1000} s per side, at least ${rounds} rounds, each side going first in turn, and more until each side has made ${tailCalls} calls; ` +
    `throughput: a window's calls / its wall time (the clients' start to the last call's end); p50 and p99 by nearest rank over every call of the level; ${machine()}, load average ${loadBefore} before, ${load()} after`,
  [
    "clients",
    "REST calls/s",
    "bare calls/s",
    "REST / bare throughput",
    "REST p50 ms",
    "REST p99 ms",
    "bare p50 ms",
    "bare p99 ms",
    "REST p99 / bare p99",
    "floor calls/s",
    "floor / bare throughput",
    "REST / floor throughput",
    "floor p99 ms",
    "floor p99 / bare p99",
    "calls (REST / bare / floor)",
    "CPU ms per call (REST / bare / floor)",
    "the service's model run ms (mean)",
    "load after",
  ],
  rows,
  "Upscaling under concurrency: REST against bare sessions (bench/upscale-concurrency.ts)",
);

const ratios = results.map(({ level, rest, bare: anchor, floor: contractFloor }) => ({
  level,
  ratio: mean(rest.throughputs) / mean(anchor.throughputs),
  floorRatio: mean(contractFloor.throughputs) / mean(anchor.throughputs),
  restP99: percentile(rest.latencies, 99),
  bareP99: percentile(anchor.latencies, 99),
  floorP99: percentile(contractFloor.latencies, 99),
}));
const worstThroughput = ratios.reduce((worst, row) => (row.ratio < worst.ratio ? row : worst));
const span = `${Math.min(...levels)}-${Math.max(...levels)}`;
const clients = (count: number) => `${count} client${count === 1 ? "" : "s"}`;
/** The goal row's closing words where the contract floor itself misses the bound at a level where REST does. */
const floorPastBound = (missed: typeof ratios, figure: (row: (typeof ratios)[number]) => string) =>
  missed.length === 0 ? "" : `; the contract floor of this run misses it too at ${missed.map((row) => `${clients(row.level)} (${figure(row)})`).join(", ")}: no server of the contract around onnxruntime's default sessions meets it there`;
reportGoal({
  goal: `upscale REST ≥ ${MIN_THROUGHPUT_RATIO.toFixed(2)}x bare throughput at concurrency ${span}`,
  measured:
    `worst ${worstThroughput.ratio.toFixed(3)}x, at ${clients(worstThroughput.level)} (${ratios.map(({ level, ratio }) => `${level}: ${ratio.toFixed(2)}x`).join(", ")}; bare: onnxruntime's default options, a session per client; ` +
    `REST / contract floor: ${ratios.map(({ level, ratio, floorRatio }) => `${level}: ${(ratio / floorRatio).toFixed(2)}x`).join(", ")})` +
    floorPastBound(
      ratios.filter((row) => row.ratio < MIN_THROUGHPUT_RATIO && row.floorRatio < MIN_THROUGHPUT_RATIO),
      (row) => `${row.floorRatio.toFixed(2)}x`,
    ),
  met: worstThroughput.ratio >= MIN_THROUGHPUT_RATIO,
});
const worstTail = ratios.reduce((worst, row) => (row.restP99 / row.bareP99 > worst.restP99 / worst.bareP99 ? row : worst));
reportGoal({
  goal: `upscale REST p99 ≤ bare p99 at concurrency ${span}`,
  measured:
    `worst ${(worstTail.restP99 / worstTail.bareP99).toFixed(2)}x, at ${clients(worstTail.level)} (${ratios.map(({ level, restP99, bareP99 }) => `${level}: ${Math.round(restP99)} / ${Math.round(bareP99)} ms`).join(", ")}; ` +
    `contract floor p99: ${ratios.map(({ level, floorP99 }) => `${level}: ${Math.round(floorP99)} ms`).join(", ")})` +
    floorPastBound(
      ratios.filter((row) => row.restP99 > row.bareP99 && row.floorP99 > row.bareP99),
      (row) => `${(row.floorP99 / row.bareP99).toFixed(2)}x`,
    ),
  met: ratios.every(({ restP99, bareP99 }) => restP99 <= bareP99),
});
removeBenchModelsDir();
console.log(`\nload average at the end ${load()}`);
