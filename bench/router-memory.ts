/**
 * Resident memory of a router-only process (workers elsewhere) next to the in-process full service,
 * both run from the compiled build as `npm start` runs them (`node dist/bin/service.js`).
 *
 *   npm run bench:router-memory
 *
 * Starts a worker process (`dist/bin/workers.js`), then a router whose every capability points at
 * it (ATELIER_WORKER_ADDRESS), then the full service alone. Each is measured just after start-up and
 * again idle after a round of requests (the model list, the OpenAPI document, a Lanczos upscale and
 * an unauthenticated call), from /proc/<pid>/status (VmRSS) or `ps`. The goal for the router is under
 * 120 MB idle. Builds dist/ first when it is missing or stale.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SqliteApiKeyStore } from "../server/keys/sqlite-api-key-store.js";
import { freeLoopbackPort } from "../test/support/free-port.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ROUTER_GOAL_MB = 120;
const SETTLE_MS = 3000;
const PNG_2X2 =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEklEQVQImWMwTjtjnHaGAUIBACS2BZUFBQd/AAAAAElFTkSuQmCC";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function residentMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    if (match?.[1]) return Number(match[1]) / 1024;
  } catch {
    // Not Linux: ps reports the same figure in KiB.
  }
  return Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) / 1024;
}

interface Started {
  child: ChildProcess;
  /** The first match of `ready` in the process's output. */
  match: RegExpExecArray;
}

async function startNode(script: string, env: Record<string, string>, ready: RegExp): Promise<Started> {
  const child = spawn(process.execPath, [path.join(root, script)], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise<Started>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) resolve({ child, match });
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", look);
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}:\n${output}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** The same round of requests for every process measured. */
async function exercise(url: string, key: string): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all([
      fetch(`${url}/api/v1/models`),
      fetch(`${url}/api/v1/openapi.json`),
      fetch(`${url}/api/v1/tools/upscale`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ imageUrl: PNG_2X2, scale: 4, model: "lanczos" }),
      }),
      fetch(`${url}/api/v1/tools/upscale`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
    ]);
    const statuses = answers.map((answer) => answer.status);
    await Promise.all(answers.map((answer) => answer.arrayBuffer()));
    if (statuses.join() !== "200,200,200,401") throw new Error(`unexpected statuses ${statuses.join()}`);
  }
}

interface Measured {
  name: string;
  startedMb: number;
  idleMb: number;
}

async function measureFacade(name: string, env: Record<string, string>, key: string): Promise<Measured> {
  const { child, match } = await startNode("dist/bin/service.js", { HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn", ...env }, /listening on (http:\/\/\S+?) /);
  try {
    await sleep(SETTLE_MS);
    const startedMb = residentMb(child.pid!);
    await exercise(match[1]!, key);
    await sleep(SETTLE_MS);
    return { name, startedMb, idleMb: residentMb(child.pid!) };
  } finally {
    await stop(child);
  }
}

async function main(): Promise<void> {
  execFileSync(process.execPath, [path.join(root, "scripts", "build.mjs"), "--if-stale"], { cwd: root, stdio: "inherit" });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-router-memory-"));
  const keys = SqliteApiKeyStore.open(dataDir);
  const key = (await keys.create({ name: "router-memory", hourlyLimit: 1_000_000 })).key;
  await keys.close();
  // No metrics listener (its default port may be taken) and no model provisioning at start.
  const env = { ATELIER_DATA_DIR: dataDir, ATELIER_METRICS_PORT: "0", ATELIER_PROVISION_MODELS: "false" };

  const workerPort = await freeLoopbackPort();
  const worker = await startNode("dist/bin/workers.js", { ...env, ATELIER_WORKER_HOST: "127.0.0.1", ATELIER_WORKER_PORT: String(workerPort) }, /worker listening/);
  const results: Measured[] = [];
  try {
    results.push(await measureFacade("router only (workers elsewhere)", { ...env, ATELIER_WORKER_ADDRESS: `127.0.0.1:${workerPort}` }, key));
    await sleep(SETTLE_MS);
    results.push({ name: "  its worker process", startedMb: Number.NaN, idleMb: residentMb(worker.child.pid!) });
  } finally {
    await stop(worker.child);
  }
  results.push(await measureFacade("full service (in-process workers)", env, key));
  fs.rmSync(dataDir, { recursive: true, force: true });

  console.log(`\nResident memory (RSS, MB), Node ${process.version}, ${os.cpus().length} cores; dist/ build, default configuration\n`);
  console.log(`${"process".padEnd(36)}${"after start".padStart(12)}${"idle after use".padStart(16)}`);
  for (const { name, startedMb, idleMb } of results) {
    const started = Number.isNaN(startedMb) ? "" : startedMb.toFixed(0);
    console.log(`${name.padEnd(36)}${started.padStart(12)}${idleMb.toFixed(0).padStart(16)}`);
  }
  const router = results[0]!;
  const verdict = router.idleMb < ROUTER_GOAL_MB ? "meets" : "MISSES";
  console.log(`\nRouter idle ${router.idleMb.toFixed(0)} MB ${verdict} the goal of under ${ROUTER_GOAL_MB} MB.`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
