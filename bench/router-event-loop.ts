/**
 * How long the router's event loop blocks during image calls, and the router's CPU time per call.
 *
 * The router runs in its own process (facade/main.ts, as `npm start` runs it with
 * ATELIER_WORKER_ADDRESS set), preloaded with bench/support/event-loop-probe.ts; the workers run
 * in this process, so their work does not count as the router's. Each call is measured alone:
 * the probe's histogram (perf_hooks.monitorEventLoopDelay) is reset before the request and read
 * after the whole response has arrived. Cases: upscale x3 with ESPCN (a cheap network) to 1 MP and
 * 12 MP outputs, and background removal with the selfie model on 1 MP and 12 MP photographs; each
 * answered as JSON (data URL) and raw (`Accept: image/png`), and the 12 MP ones also as jobs
 * (`Prefer: wait`: stored, run, answered in one request). Goal (issue 19): no block over 20 ms.
 * The loop delay counts the time a loaded machine keeps the router off the CPU too; the probe's
 * "block CPU" is the router's own longest synchronous stretch in main-thread CPU time, which load
 * does not inflate (see bench/support/event-loop-probe.ts): the goal is judged on it where it exists.
 *
 *   npx tsx bench/router-event-loop.ts [--runs N] [--only TEXT] [--cpu-prof DIR]
 *
 * --only keeps the cases whose name contains TEXT; --skip-jobs leaves the jobs out (a stored job's
 * data in SQLite also weighs on later calls: the purge every minute reads its rows); --cpu-prof writes the router's CPU profile to DIR
 * and names what ran in each case's worst block (bench/support/profile-blocks.ts).
 *
 * Needs the model mirror (ATELIER_MODEL_MIRROR) and the test photographs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { SqliteApiKeyStore } from "../server/keys/sqlite-api-key-store.js";
import { installedModelsDir } from "../test/support/installed-models.js";
import { testPhotos } from "../test/support/test-assets.js";
import { startWorkerServer } from "../workers/worker-server.js";
import { reportGoal } from "./support/goal-rows.js";
import { framesDuring, type Stretch } from "./support/profile-blocks.js";

const { values } = parseArgs({ options: { runs: { type: "string" }, "cpu-prof": { type: "string" }, only: { type: "string" }, "skip-jobs": { type: "boolean" } } });
const RUNS = Number(values.runs ?? 3);
const GOAL_MS = 20;

interface Probe {
  maxMs: number;
  p99Ms: number;
  /** The router's longest synchronous block in main-thread CPU time (null where Linux schedstat is missing). */
  blockCpuMs: number | null;
  /** When that block ran (process.hrtime, microseconds). */
  longestBlock: Stretch;
  cpuMs: number;
  wallMs: number;
}

const load = () => os.loadavg().map((value) => value.toFixed(1)).join(" ");
const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!;

/** A photograph resized to exactly `width` x `height`, as PNG. */
async function photo(width: number, height: number): Promise<Buffer> {
  return sharp(path.join(testPhotos, "chelsea.png")).resize(width, height, { fit: "fill" }).png().toBuffer();
}

const modelsDir = await installedModelsDir(["espcn-x3", "portrait-selfie"]);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-bench-event-loop-"));
const config = loadConfig({ ...process.env, ATELIER_MODELS_DIR: modelsDir, ATELIER_DATA_DIR: dataDir, LOG_LEVEL: "silent" });
const worker = await startWorkerServer(config, createLogger("silent"), { host: "127.0.0.1", port: 0 });
const keys = SqliteApiKeyStore.open(dataDir);
const key = (await keys.create({ name: "bench", hourlyLimit: null })).key;
await keys.close();

const router: ChildProcess = spawn(
  process.execPath,
  [
    ...(values["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(values["cpu-prof"])] : []),
    "--import",
    "tsx",
    "--import",
    path.resolve("bench/support/event-loop-probe.ts"),
    path.resolve("facade/main.ts"),
  ],
  {
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "warn",
      ATELIER_DATA_DIR: dataDir,
      ATELIER_METRICS_PORT: "0",
      ATELIER_PROVISION_MODELS: "false",
      ATELIER_WORKER_ADDRESS: worker.address,
      ATELIER_MODELS_DIR: modelsDir,
    },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  },
);
let banner = "";
const baseUrl = await new Promise<string>((resolve, reject) => {
  router.stdout!.on("data", (chunk: Buffer) => {
    banner += chunk.toString();
    const match = /listening on (http:\/\/\S+?) /.exec(banner);
    if (match?.[1]) resolve(match[1]);
  });
  router.once("exit", (code) => reject(new Error(`router exited with ${code}:\n${banner}`)));
});

function ask<T>(message: string, answer: (reply: unknown) => reply is T): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (reply: unknown) => {
      if (!answer(reply)) return;
      router.off("message", onMessage);
      resolve(reply);
    };
    router.on("message", onMessage);
    router.send(message);
  });
}

/** Posts `body` and reads the whole answer without parsing it (the client's work stays small). */
function post(endpoint: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; bytes: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}${endpoint}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": body.length, ...headers },
    });
    request.once("error", reject);
    request.once("response", (response) => {
      let bytes = 0;
      let head = "";
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (head.length < 300) head += chunk.toString("latin1", 0, 300);
      });
      response.once("end", () => resolve({ status: response.statusCode ?? 0, bytes, contentType: String(response.headers["content-type"]), text: head }));
    });
    request.end(body);
  });
}

async function measuredCall(endpoint: string, body: Buffer, headers: Record<string, string>): Promise<Probe & { responseBytes: number }> {
  await ask("reset", (reply): reply is string => reply === "reset-done");
  const answer = await post(endpoint, body, headers);
  if (answer.status !== 200) throw new Error(`${endpoint} answered ${answer.status}: ${answer.text}`);
  const probe = await ask("report", (reply): reply is Probe => typeof reply === "object" && reply !== null && "maxMs" in reply);
  return { ...probe, responseBytes: answer.bytes };
}

const dataUrlOf = (png: Buffer) => `data:image/png;base64,${png.toString("base64")}`;
type Answer = readonly [name: string, headers: Record<string, string>];
const direct: Answer[] = [
  ["json", { accept: "application/json" }],
  ["raw png", { accept: "image/png" }],
];
// A job the request waits for: submitted, stored, run over the progress stream, answered from the store.
const asJobs: Answer[] = values["skip-jobs"] ? [] : [
  ["job json", { accept: "application/json", prefer: "wait=600" }],
  ["job raw png", { accept: "image/png", prefer: "wait=600" }],
];
const cases: { name: string; endpoint: string; body: Buffer; answers: Answer[] }[] = [];
for (const [label, width, height] of [["1 MP", 333, 333], ["12 MP", 1333, 1000]] as const) {
  const body = Buffer.from(JSON.stringify({ imageUrl: dataUrlOf(await photo(width, height)), scale: 3, model: "espcn-x3" }));
  cases.push({ name: `upscale espcn-x3 x3 to ${label}`, endpoint: "/api/v1/tools/upscale", body, answers: label === "12 MP" ? [...direct, ...asJobs] : direct });
}
for (const [label, width, height] of [["1 MP", 1000, 1000], ["12 MP", 4000, 3000]] as const) {
  const body = Buffer.from(JSON.stringify({ imageUrl: dataUrlOf(await photo(width, height)), model: "portrait-selfie" }));
  cases.push({ name: `background portrait-selfie ${label}`, endpoint: "/api/v1/tools/background-remove", body, answers: label === "12 MP" ? [...direct, ...asJobs] : direct });
}
if (values.only !== undefined) cases.splice(0, cases.length, ...cases.filter((item) => item.name.includes(values.only!)));

console.log(`${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}; load ${load()}`);
console.log(`router pid ${router.pid} (workers in this process); ${RUNS} runs per case, interleaved; goal: event-loop block <= ${GOAL_MS} ms`);

// Warm-up: each model loaded, each code path compiled once, before anything is measured.
for (const item of cases) for (const [, headers] of item.answers) await measuredCall(item.endpoint, item.body, headers);

const results = new Map<string, (Probe & { responseBytes: number })[]>();
for (let run = 0; run < RUNS; run++) {
  for (const item of cases) {
    for (const [answer, headers] of item.answers) {
      const key = `${item.name} | ${answer}`;
      results.set(key, [...(results.get(key) ?? []), await measuredCall(item.endpoint, item.body, headers)]);
    }
  }
}

console.log("\n| call | answer | request MB | response MB | block CPU ms (median, worst) | loop max ms (median, worst) | loop p99 ms (median) | router CPU ms/call (median) | wall ms (median) |");
console.log("|---|---|---|---|---|---|---|---|---|");
let worst = 0;
let worstCpu: number | null = 0;
/** The worst block CPU of synchronous calls and of jobs, apart. */
const worstOf = { synchronous: 0, jobs: 0 };
const shown = (value: number | null) => (value === null ? "n/a" : value.toFixed(1));
for (const item of cases) {
  for (const [answer] of item.answers) {
    const runs = results.get(`${item.name} | ${answer}`)!;
    const maxes = runs.map((run) => run.maxMs);
    worst = Math.max(worst, ...maxes);
    const blocks = runs.map((run) => run.blockCpuMs);
    const measuredBlocks = blocks.filter((block): block is number => block !== null);
    worstCpu = measuredBlocks.length < blocks.length || worstCpu === null ? null : Math.max(worstCpu, ...measuredBlocks);
    const kind = answer.startsWith("job") ? "jobs" : "synchronous";
    worstOf[kind] = Math.max(worstOf[kind], ...measuredBlocks);
    console.log(
      `| ${item.name} | ${answer} | ${(item.body.length / 2 ** 20).toFixed(1)} | ${(runs[0]!.responseBytes / 2 ** 20).toFixed(1)} | ` +
        `${measuredBlocks.length < blocks.length ? "n/a" : `${median(measuredBlocks).toFixed(1)}, ${Math.max(...measuredBlocks).toFixed(1)}`} | ` +
        `${median(maxes).toFixed(1)}, ${Math.max(...maxes).toFixed(1)} | ${median(runs.map((run) => run.p99Ms)).toFixed(1)} | ` +
        `${median(runs.map((run) => run.cpuMs)).toFixed(0)} | ${median(runs.map((run) => run.wallMs)).toFixed(0)} |`,
    );
  }
}
const judged = worstCpu ?? worst;
const apart = worstCpu === null ? "" : ` (synchronous calls ${worstOf.synchronous.toFixed(1)} ms${asJobs.length > 0 ? `, jobs ${worstOf.jobs.toFixed(1)} ms` : ""})`;
console.log(
  `\nworst block: ${shown(worstCpu)} ms of router CPU${apart}, ${worst.toFixed(1)} ms of loop delay ` +
    `(goal <= ${GOAL_MS} ms, judged on ${worstCpu === null ? "the loop delay" : "CPU"}: ${judged <= GOAL_MS ? "met" : "missed"}); load ${load()}`,
);
reportGoal({
  goal: `router event loop: no block over ${GOAL_MS} ms during image calls`,
  measured: `${shown(worstCpu)} ms of router CPU${apart}, ${worst.toFixed(1)} ms of loop delay, worst of ${RUNS} runs per case (judged on ${worstCpu === null ? "the loop delay" : "CPU"})`,
  met: judged <= GOAL_MS,
});

router.kill("SIGTERM");
await new Promise((resolve) => router.once("exit", resolve));
if (values["cpu-prof"]) {
  // The router's main thread writes CPU.<date>.<time>.<pid>.0.<n>.cpuprofile as it exits.
  const folder = path.resolve(values["cpu-prof"]);
  const profile = fs.readdirSync(folder).find((name) => name.includes(`.${router.pid}.0.`) && name.endsWith(".cpuprofile"));
  if (profile) {
    console.log(`\nWhat ran in each case's worst block (samples of ${path.join(folder, profile)} in it, ms):`);
    const worstRuns = [...results].map(([name, runs]) => ({ name, run: runs.reduce((a, b) => ((b.blockCpuMs ?? b.maxMs) > (a.blockCpuMs ?? a.maxMs) ? b : a)) }));
    const frames = framesDuring(path.join(folder, profile), worstRuns.map(({ run }) => run.longestBlock));
    worstRuns.forEach(({ name, run }, index) => {
      console.log(`- ${name}: ${shown(run.blockCpuMs)} ms CPU; ${frames[index]!.map(({ frame, ms }) => `${frame} ${ms.toFixed(1)}`).join("; ") || "no samples"}`);
    });
  }
}
await worker.shutdown();
fs.rmSync(dataDir, { recursive: true, force: true });
