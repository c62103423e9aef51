/**
 * How long the router's event loop blocks during image calls, and the router's CPU time per call.
 *
 * The router runs in its own process (bin/service.ts, as `npm start` runs it with
 * ATELIER_WORKER_ADDRESS set), preloaded with bench/support/event-loop-probe.ts; the workers run
 * in this process, so their work does not count as the router's. Each call is measured alone:
 * the probe's histogram (perf_hooks.monitorEventLoopDelay) is reset before the request and read
 * after the whole response has arrived. Cases: upscale x3 with ESPCN (a cheap network) to 1 MP and
 * 12 MP outputs, and background removal with the selfie model on 1 MP and 12 MP photographs; each
 * answered as JSON (data URL) and raw (`Accept: image/png`), and the 12 MP ones also as jobs:
 * `Prefer: wait` (stored, run, answered in one request), and a job followed through the whole jobs
 * API, each step measured alone: submitted (`Prefer: respond-async`, an `Idempotency-Key` and a
 * `webhookUrl`), run and finished with its webhook received, read back (`GET /jobs/{id}`, its raw
 * `/result`, its `/events`), replayed (the same key and body with `Prefer: wait`), shown by the
 * console (the job page and its image), and at the end purged (the store's purge in a process of
 * its own with the probe, every result and record past its retention). Goal: no block
 * over 20 ms.
 * The loop delay counts the time a loaded machine keeps the router off the CPU too; the probe's
 * "block CPU" is the router's own longest synchronous stretch in main-thread CPU time, which load
 * does not inflate (see bench/support/event-loop-probe.ts): the goal is judged on it where it exists.
 * Each case runs `--runs` times (default 5) and its figure is the median of its runs' longest blocks:
 * the block that call meets every other time, not the one run a garbage collection happened to land
 * in. The worst case's median is judged; the single worst run is printed beside it with how much of
 * it was collection (the probe's `gc` entries), so an outlier is seen for what it is.
 *
 *   npx tsx bench/router-event-loop.ts [--runs N] [--only TEXT] [--skip-jobs] [--redis] [--cpu-prof DIR]
 *
 * --only keeps the cases whose name contains TEXT; --skip-jobs leaves the jobs out; --redis runs the
 * jobs on the shared queue (a redis-server of its own, ATELIER_REDIS_URL) instead of SQLite;
 * --cpu-prof writes the router's CPU profile to DIR and names what ran in each case's worst block
 * (bench/support/profile-blocks.ts).
 *
 * Needs the model mirror (ATELIER_MODEL_MIRROR) and the test photographs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { openAccountStore } from "../server/accounts/open-account-store.js";
import { SqliteApiKeyStore } from "../server/keys/sqlite-api-key-store.js";
import { startRedisServer } from "../test/support/redis-server.js";
import { installedModelsDir, removeBenchModelsDir } from "../test/support/installed-models.js";
import { testPhotos } from "../test/support/test-assets.js";
import { startWorkerServer } from "../workers/worker-server.js";
import { reportGoal } from "./support/goal-rows.js";
import { getCounted, postCounted, type CountedAnswer } from "./support/counted-http.js";
import { framesDuring, type Stretch } from "./support/profile-blocks.js";
import { loadAverage as load, machineDescription, median, speedProbeMs } from "./support/figures.js";

const { values } = parseArgs({
  options: { runs: { type: "string" }, "cpu-prof": { type: "string" }, only: { type: "string" }, "skip-jobs": { type: "boolean" }, redis: { type: "boolean" } },
});
const RUNS = Number(values.runs ?? 5);
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
  /** How much of the longest block was garbage collection, the longest collection pause and its kind, all collections (ms). */
  gcInBlockMs: number;
  gcMaxMs: number;
  gcMaxKind: string;
  gcTotalMs: number;
}

/** A photograph resized to exactly `width` x `height`, as PNG. */
async function photo(width: number, height: number): Promise<Buffer> {
  return sharp(path.join(testPhotos, "chelsea.png")).resize(width, height, { fit: "fill" }).png().toBuffer();
}

const modelsDir = await installedModelsDir(["espcn-x3", "portrait-selfie"]);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-bench-event-loop-"));
const config = loadConfig({ ...process.env, ATELIER_MODELS_DIR: modelsDir, ATELIER_DATA_DIR: dataDir, LOG_LEVEL: "silent" });
const worker = await startWorkerServer(config, createLogger("silent"), { host: "127.0.0.1", port: 0 });
// A console user owning the key, so the console's job pages show the bench's jobs.
const CONSOLE_USER = { email: "bench@example.com", password: "event loop bench" };
const accounts = await openAccountStore(config);
const user = await accounts.createUser({ ...CONSOLE_USER, role: "member" });
await accounts.close();
const keys = SqliteApiKeyStore.open(dataDir);
const key = (await keys.create({ name: "bench", hourlyLimit: null, ownerId: user.id })).key;
await keys.close();
const redis = values.redis ? await startRedisServer() : undefined;

// The jobs' webhooks land here: each resolves its job's waiter once the whole payload has arrived.
const webhookWaiters = new Map<string, () => void>();
const receiver = http.createServer((request, response) => {
  request.resume();
  request.once("end", () => {
    response.end();
    webhookWaiters.get(String(request.headers["webhook-id"]))?.();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const webhookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

const router: ChildProcess = spawn(
  process.execPath,
  [
    ...(values["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(values["cpu-prof"])] : []),
    "--import",
    "tsx",
    "--import",
    path.resolve("bench/support/event-loop-probe.ts"),
    path.resolve("bin/service.ts"),
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
      ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1",
      ...(redis ? { ATELIER_REDIS_URL: redis.url } : {}),
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

/** Sends `message` to a child process over IPC and resolves with its first reply that `answer` accepts. */
function ask<T>(child: ChildProcess, message: string, answer: (reply: unknown) => reply is T): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (reply: unknown) => {
      if (!answer(reply)) return;
      child.off("message", onMessage);
      resolve(reply);
    };
    child.on("message", onMessage);
    child.send(message);
  });
}

/** Posts `body` to the router with the bench's key and reads the whole answer, counted (counted-http.ts). */
function post(endpoint: string, body: Buffer, headers: Record<string, string>): Promise<CountedAnswer> {
  return postCounted(`${baseUrl}${endpoint}`, body, { authorization: `Bearer ${key}`, ...headers });
}

/** GETs `endpoint` and reads the whole answer, as {@link post}. */
function get(endpoint: string, headers: Record<string, string>): Promise<CountedAnswer> {
  return getCounted(`${baseUrl}${endpoint}`, headers);
}

type Answered = { status: number; bytes: number; text: string };
const expectStatus = (what: string, answer: Answered, status: number) => {
  if (answer.status !== status) throw new Error(`${what} answered ${answer.status}: ${answer.text}`);
  return answer;
};

/** The router's probe around `step` alone; `step` returns the size of what it received. */
async function measured(step: () => Promise<number>): Promise<Probe & { responseBytes: number }> {
  await ask(router, "reset", (reply): reply is string => reply === "reset-done");
  const responseBytes = await step();
  const probe = await ask(router, "report", (reply): reply is Probe => typeof reply === "object" && reply !== null && "maxMs" in reply);
  return { ...probe, responseBytes };
}

function measuredCall(endpoint: string, body: Buffer, headers: Record<string, string>): Promise<Probe & { responseBytes: number }> {
  return measured(async () => expectStatus(endpoint, await post(endpoint, body, headers), 200).bytes);
}

const bearer = { authorization: `Bearer ${key}` };
let consoleCookie = "";
/** Signs in to the console as the key's owner (once). */
async function consoleSession(): Promise<string> {
  if (consoleCookie) return consoleCookie;
  const response = await fetch(`${baseUrl}/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: baseUrl, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(CONSOLE_USER),
  });
  consoleCookie = response.headers.getSetCookie().find((line) => line.includes("atelier_session="))?.split(";")[0] ?? "";
  if (!consoleCookie) throw new Error(`console sign-in answered ${response.status}`);
  return consoleCookie;
}

const FINISHED = new Set(["succeeded", "failed", "canceled"]);

/** Waits for the job to finish (reading the job list, which leaves results out) and for its webhook to arrive. */
async function jobFinished(id: string, webhook: Promise<void>): Promise<number> {
  for (;;) {
    const list = expectStatus("GET /jobs", await new Promise<Answered & { json: string }>((resolve, reject) => {
      const request = http.get(`${baseUrl}/api/v1/jobs?limit=5`, { headers: bearer });
      request.once("error", reject);
      request.once("response", (response) => {
        let json = "";
        response.on("data", (chunk: Buffer) => (json += chunk.toString()));
        response.once("end", () => resolve({ status: response.statusCode ?? 0, bytes: json.length, text: json.slice(0, 300), json }));
      });
    }), 200) as Answered & { json: string };
    const job = (JSON.parse(list.json) as { data: { id: string; status: string }[] }).data.find((item) => item.id === id);
    if (job && FINISHED.has(job.status)) {
      if (job.status !== "succeeded") throw new Error(`job ${id} ${job.status}`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await webhook;
  return 0;
}

/** The steps of a job followed through the jobs API and the console, each measured alone. */
async function jobFlow(endpoint: string, fields: Record<string, unknown>): Promise<Map<string, Probe & { responseBytes: number }>> {
  const steps = new Map<string, Probe & { responseBytes: number }>();
  const idempotencyKey = randomUUID();
  const body = Buffer.from(JSON.stringify({ ...fields, webhookUrl }));
  let id = "";
  steps.set("job submit (async, key, webhook)", await measured(async () => {
    const answer = expectStatus("submit", await post(endpoint, body, { prefer: "respond-async", "idempotency-key": idempotencyKey }), 202);
    id = /"id":"(job_[^"]+)"/.exec(answer.text)?.[1] ?? "";
    return answer.bytes;
  }));
  const webhook = new Promise<void>((resolve) => webhookWaiters.set(`msg_${id}`, resolve));
  steps.set("job run, finish, webhook", await measured(() => jobFinished(id, webhook)));
  steps.set("job GET", await measured(async () => expectStatus("GET job", await get(`/api/v1/jobs/${id}`, bearer), 200).bytes));
  steps.set("job GET result (raw)", await measured(async () => expectStatus("GET result", await get(`/api/v1/jobs/${id}/result`, bearer), 200).bytes));
  steps.set("job events", await measured(async () => expectStatus("GET events", await get(`/api/v1/jobs/${id}/events`, bearer), 200).bytes));
  steps.set("job replay (same key, wait)", await measured(async () => expectStatus("replay", await post(endpoint, body, { prefer: "wait=60", "idempotency-key": idempotencyKey }), 200).bytes));
  const cookie = await consoleSession();
  steps.set("console job page", await measured(async () => expectStatus("console job page", await get(`/jobs/${id}`, { cookie }), 200).bytes));
  steps.set("console job image", await measured(async () => expectStatus("console job image", await get(`/jobs/${id}/images/0`, { cookie }), 200).bytes));
  return steps;
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
const cases: { name: string; endpoint: string; fields: Record<string, unknown>; body: Buffer; answers: Answer[]; flow: boolean }[] = [];
for (const [label, width, height] of [["1 MP", 333, 333], ["12 MP", 1333, 1000]] as const) {
  const fields = { imageUrl: dataUrlOf(await photo(width, height)), scale: 3, model: "espcn-x3" };
  const jobs = label === "12 MP" && !values["skip-jobs"];
  cases.push({ name: `upscale espcn-x3 x3 to ${label}`, endpoint: "/api/v1/tools/upscale", fields, body: Buffer.from(JSON.stringify(fields)), answers: jobs ? [...direct, ...asJobs] : direct, flow: jobs });
}
for (const [label, width, height] of [["1 MP", 1000, 1000], ["12 MP", 4000, 3000]] as const) {
  const fields = { imageUrl: dataUrlOf(await photo(width, height)), model: "portrait-selfie" };
  const jobs = label === "12 MP" && !values["skip-jobs"];
  cases.push({ name: `background portrait-selfie ${label}`, endpoint: "/api/v1/tools/background-remove", fields, body: Buffer.from(JSON.stringify(fields)), answers: jobs ? [...direct, ...asJobs] : direct, flow: jobs });
}
if (values.only !== undefined) cases.splice(0, cases.length, ...cases.filter((item) => item.name.includes(values.only!)));

// Its figures are absolute CPU times, which a host that slows this machine inflates: the probe says whether it did.
const speedBefore = speedProbeMs();
console.log(`${machineDescription()}; load ${load()}; speed probe ${speedBefore} ms`);
console.log(`router pid ${router.pid} (workers in this process); ${RUNS} runs per case, interleaved; jobs stored in ${redis ? "Redis" : "SQLite"}; goal: event-loop block <= ${GOAL_MS} ms`);

// Warm-up: each model loaded, each code path compiled once, before anything is measured.
for (const item of cases) {
  for (const [, headers] of item.answers) await measuredCall(item.endpoint, item.body, headers);
  if (item.flow) await jobFlow(item.endpoint, item.fields);
}

const results = new Map<string, (Probe & { responseBytes: number })[]>();
/** Each case's answers and job steps, in the order measured. */
const rows = new Map<string, string[]>();
const record = (item: { name: string }, answer: string, probe: Probe & { responseBytes: number }) => {
  const key = `${item.name} | ${answer}`;
  results.set(key, [...(results.get(key) ?? []), probe]);
  const names = rows.get(item.name) ?? [];
  if (!names.includes(answer)) rows.set(item.name, [...names, answer]);
};
for (let run = 0; run < RUNS; run++) {
  for (const item of cases) {
    for (const [answer, headers] of item.answers) record(item, answer, await measuredCall(item.endpoint, item.body, headers));
    if (item.flow) for (const [step, probe] of await jobFlow(item.endpoint, item.fields)) record(item, step, probe);
  }
}

// The purge, as it runs every minute once the results and records above have expired: the store's
// own purge in a process of its own, preloaded with the probe, all of it measured.
let purge: (Probe & { responseBytes: number }) | undefined;
if (!values["skip-jobs"]) {
  const purger = spawn(process.execPath, ["--import", "tsx", "--import", path.resolve("bench/support/event-loop-probe.ts"), path.resolve("bench/support/job-purge.ts")], {
    env: { ...process.env, LOG_LEVEL: "silent", ATELIER_DATA_DIR: dataDir, ...(redis ? { ATELIER_REDIS_URL: redis.url } : {}) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const opened = new Promise<void>((resolve) => purger.once("message", () => resolve()));
  await opened;
  await ask(purger, "reset", (reply): reply is string => reply === "reset-done");
  const purged = await ask(purger, "purge", (reply): reply is { results: number; records: number } => typeof reply === "object" && reply !== null && "records" in reply);
  purge = { ...(await ask(purger, "report", (reply): reply is Probe => typeof reply === "object" && reply !== null && "maxMs" in reply)), responseBytes: 0 };
  console.log(`purge: ${purged.results} results and ${purged.records} records`);
  purger.kill("SIGTERM");
  await new Promise((resolve) => purger.once("exit", resolve));
}

console.log(
  "\n| call | answer | request MB | response MB | block CPU ms (median, worst) | GC pauses in that block, wall ms (median, in the worst run) | longest GC pause, wall ms (kind) | " +
    "loop max ms (median, worst) | loop p99 ms (median) | router CPU ms/call (median) | wall ms (median) |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
/** Each case's figure: its median over the runs (a block every call of it meets), and its single worst run. */
interface CaseFigure {
  name: string;
  kind: "synchronous" | "jobs";
  median: number;
  worst: number;
  gcInWorst: number;
}
const figures: CaseFigure[] = [];
let worstDelay = 0;
let cpuMeasured = true;
const tableRows = cases.flatMap((item) => (rows.get(item.name) ?? []).map((answer) => ({ item, answer, runs: results.get(`${item.name} | ${answer}`)! })));
if (purge) tableRows.push({ item: { name: "job store purge (all expired)", body: Buffer.alloc(0) } as (typeof cases)[number], answer: "job purge", runs: [purge] });
for (const { item, answer, runs } of tableRows) {
  const maxes = runs.map((run) => run.maxMs);
  worstDelay = Math.max(worstDelay, ...maxes);
  cpuMeasured &&= runs.every((run) => run.blockCpuMs !== null);
  // Judged on CPU where the probe reads it, else on the loop delay.
  const blockOf = (run: Probe) => run.blockCpuMs ?? run.maxMs;
  const worstRun = runs.reduce((a, b) => (blockOf(b) > blockOf(a) ? b : a));
  const longestGc = runs.reduce((a, b) => (b.gcMaxMs > a.gcMaxMs ? b : a));
  figures.push({
    name: `${item.name} | ${answer}`,
    kind: answer.startsWith("job") || answer.startsWith("console job") ? "jobs" : "synchronous",
    median: median(runs.map(blockOf)),
    worst: blockOf(worstRun),
    gcInWorst: worstRun.gcInBlockMs,
  });
  console.log(
    `| ${item.name} | ${answer} | ${(item.body.length / 2 ** 20).toFixed(1)} | ${(runs[0]!.responseBytes / 2 ** 20).toFixed(1)} | ` +
      `${runs.some((run) => run.blockCpuMs === null) ? "n/a" : `${median(runs.map(blockOf)).toFixed(1)}, ${blockOf(worstRun).toFixed(1)}`} | ` +
      `${median(runs.map((run) => run.gcInBlockMs)).toFixed(1)}, ${worstRun.gcInBlockMs.toFixed(1)} | ${longestGc.gcMaxMs.toFixed(1)} ${longestGc.gcMaxKind} | ` +
      `${median(maxes).toFixed(1)}, ${Math.max(...maxes).toFixed(1)} | ${median(runs.map((run) => run.p99Ms)).toFixed(1)} | ` +
      `${median(runs.map((run) => run.cpuMs)).toFixed(0)} | ${median(runs.map((run) => run.wallMs)).toFixed(0)} |`,
  );
}
const highest = (list: CaseFigure[], by: (figure: CaseFigure) => number) => list.reduce((a, b) => (by(b) > by(a) ? b : a));
const judgedCase = highest(figures, (figure) => figure.median);
const worstCase = highest(figures, (figure) => figure.worst);
const judgedOf = (kind: CaseFigure["kind"]) => figures.filter((figure) => figure.kind === kind).reduce((most, figure) => Math.max(most, figure.median), 0);
const basis = cpuMeasured ? "router CPU" : "loop delay";
const apart = `synchronous calls ${judgedOf("synchronous").toFixed(1)} ms${asJobs.length > 0 ? `, jobs ${judgedOf("jobs").toFixed(1)} ms` : ""}`;
const speed = `speed probe ${speedBefore} ms before, ${speedProbeMs()} ms after (bench/support/figures.ts)`;
const single = `the single worst run ${worstCase.worst.toFixed(1)} ms (${worstCase.name}, ${worstCase.gcInWorst.toFixed(1)} ms of it garbage collection)`;
console.log(
  `\nlongest block, the median of ${RUNS} runs of the worst case: ${judgedCase.median.toFixed(1)} ms of ${basis} (${judgedCase.name}; ${apart}); ${single}; ` +
    `${worstDelay.toFixed(1)} ms of loop delay at worst (goal <= ${GOAL_MS} ms: ${judgedCase.median <= GOAL_MS ? "met" : "missed"}); load ${load()}; ${speed}`,
);
reportGoal({
  goal: `router event loop: no block over ${GOAL_MS} ms during image calls`,
  measured: `${judgedCase.median.toFixed(1)} ms of ${basis} (${apart}): each case's median of ${RUNS} runs, the worst case; ${single}; ${speed}`,
  met: judgedCase.median <= GOAL_MS,
});

router.kill("SIGTERM");
await new Promise((resolve) => router.once("exit", resolve));
receiver.close();
await redis?.dispose();
if (values["cpu-prof"]) {
  // The router's main thread writes CPU.<date>.<time>.<pid>.0.<n>.cpuprofile as it exits.
  const folder = path.resolve(values["cpu-prof"]);
  const profile = fs.readdirSync(folder).find((name) => name.includes(`.${router.pid}.0.`) && name.endsWith(".cpuprofile"));
  if (profile) {
    console.log(`\nWhat ran in each case's worst block (samples of ${path.join(folder, profile)} in it, ms):`);
    const worstRuns = [...results].map(([name, runs]) => ({ name, run: runs.reduce((a, b) => ((b.blockCpuMs ?? b.maxMs) > (a.blockCpuMs ?? a.maxMs) ? b : a)) }));
    const frames = framesDuring(path.join(folder, profile), worstRuns.map(({ run }) => run.longestBlock));
    worstRuns.forEach(({ name, run }, index) => {
      console.log(`- ${name}: ${run.blockCpuMs === null ? "n/a" : run.blockCpuMs.toFixed(1)} ms CPU (${run.gcInBlockMs.toFixed(1)} ms GC); ${frames[index]!.map(({ frame, ms }) => `${frame} ${ms.toFixed(1)}`).join("; ") || "no samples"}`);
    });
  }
}
await worker.shutdown();
fs.rmSync(dataDir, { recursive: true, force: true });
removeBenchModelsDir();
