/**
 * The compose topology as real processes on loopback: two routers (`npm start` entry) sharing
 * PostgreSQL keys and Redis quota, two worker replicas (`npm run start:workers` entry) that both
 * routers balance over (round_robin over the replica list). Load goes to both routers; one worker is
 * SIGKILLed mid-load: every request ends in a 200 or a clear 503, none hangs; 503s are refunded so
 * the quota stays exact across routers; the killed replica restarts on its port and serves again
 * without anything else being restarted.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import readline from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { openApiKeyStore } from "../../server/keys/open-api-key-store.js";
import { freeLoopbackPort } from "../support/free-port.js";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";
import { skipWithoutRedis, startRedisServer, type RedisServer } from "../support/redis-server.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { makeTempDir } from "../support/temp-dir.js";
import { startTestService } from "../support/test-service.js";

const skip = skipWithoutRedis("scale-out") || skipWithoutPostgres("scale-out");
const REQUEST_TIMEOUT_MS = 60_000;

interface Proc {
  child: ChildProcess;
  lines: string[];
}

const processes: ChildProcess[] = [];

/** Spawns an entry point and resolves with the first stdout line `ready` accepts. */
function launch(entry: string, env: Record<string, string>, ready: (line: string) => string | undefined): Promise<Proc & { value: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", entry], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  processes.push(child);
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let found = false;
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      const value = found ? undefined : ready(line);
      if (value !== undefined) {
        found = true;
        resolve({ child, lines, value });
      }
    });
    child.once("exit", (code) => {
      if (!found) reject(new Error(`${entry} exited with ${code}:\n${lines.join("\n")}`));
    });
  });
}

describe.skipIf(skip)("scale-out topology: two routers, two worker replicas, Redis and PostgreSQL", () => {
  let redis: RedisServer;
  let postgres: PostgresServer;
  let common: Record<string, string>;
  const workerPorts: number[] = [];
  const workers: Proc[] = [];
  const routers: string[] = [];
  const dataDir = makeTempDir("test");

  const startWorker = (index: number) =>
    launch("bin/workers.ts", { ...common, LOG_LEVEL: "debug", ATELIER_WORKER_HOST: "127.0.0.1", ATELIER_WORKER_PORT: String(workerPorts[index]) }, (line) =>
      line.includes('"msg":"worker listening"') ? line : undefined,
    );

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
    common = {
      HOST: "127.0.0.1",
      ATELIER_DATA_DIR: dataDir,
      ATELIER_DATABASE_URL: await postgres.createDatabase("atelier_scale"),
      ATELIER_REDIS_URL: redis.url,
      ATELIER_METRICS_PORT: "0",
      ATELIER_PROVISION_MODELS: "false",
      ATELIER_SHUTDOWN_GRACE_MS: "5000",
    };
    workerPorts.push(await freeLoopbackPort(), await freeLoopbackPort());
    workers.push(...(await Promise.all([startWorker(0), startWorker(1)])));
    const replicas = `ipv4:127.0.0.1:${workerPorts[0]},127.0.0.1:${workerPorts[1]}`;
    const started = await Promise.all(
      [0, 1].map(() =>
        launch("bin/service.ts", { ...common, PORT: "0", LOG_LEVEL: "warn", ATELIER_WORKER_ADDRESS: replicas }, (line) => /^Atelier is listening on (\S+)/.exec(line)?.[1]),
      ),
    );
    routers.push(...started.map((router) => router.value));
  }, 120_000);

  afterAll(async () => {
    for (const child of processes) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await Promise.all([redis?.dispose(), postgres?.dispose()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function createKey(hourlyLimit: number): Promise<string> {
    const keys = await openApiKeyStore(loadConfig(common));
    try {
      return (await keys.create({ name: `scale-${hourlyLimit}`, hourlyLimit })).key;
    } finally {
      await keys.close();
    }
  }

  /** One upscale through router `index`; a request that does not finish in time fails the test as a hang. */
  async function upscale(index: number, key: string, image: string, model = "esrgan-slim") {
    const response = await fetch(`${routers[index % 2]}/api/v1/tools/upscale`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ imageUrl: image, scale: 2, model }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const body = (await response.json()) as { code?: string; message?: string };
    return { status: response.status, code: body.code, retryAfter: response.headers.get("retry-after"), remaining: Number(response.headers.get("x-ratelimit-remaining")) };
  }

  const callsServedBy = (worker: Proc) => worker.lines.filter((line) => line.includes('"msg":"call done"') && line.includes('"method":"Upscale"')).length;

  it("both routers are ready and spread work over both replicas", async () => {
    for (const router of routers) expect((await fetch(`${router}/readyz`)).status).toBe(200);
    const key = await createKey(1000);
    const image = dataUrl(await gradientPng(48, 48));
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => upscale(i, key, image)));
    expect(results.map((result) => result.status)).toEqual(Array(8).fill(200));
    expect(callsServedBy(workers[0]!)).toBeGreaterThan(0);
    expect(callsServedBy(workers[1]!)).toBeGreaterThan(0);
  }, 120_000);

  it("a replica killed mid-load: every request is a 200 or a clear 503, none hangs, 503s are refunded", async () => {
    const limit = 1000;
    const key = await createKey(limit);
    const image = dataUrl(await gradientPng(96, 96));
    const total = 30;
    const servedBefore = callsServedBy(workers[0]!);
    const pending = Array.from({ length: total }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * 40));
      return upscale(i, key, image);
    });
    // Kill the replica once it has finished a call of this load, while the rest is still running.
    while (callsServedBy(workers[0]!) === servedBefore) await new Promise((resolve) => setTimeout(resolve, 20));
    workers[0]!.child.kill("SIGKILL");
    const results = await Promise.all(pending);

    const statuses = results.map((result) => result.status);
    expect(statuses.every((status) => status === 200 || status === 503), JSON.stringify(results)).toBe(true);
    for (const failure of results.filter((result) => result.status === 503)) {
      // The dying replica's calls (when the retry also fails), or the survivor's full queue.
      expect(["WORKER_UNAVAILABLE", "OVERLOADED"]).toContain(failure.code);
      expect(Number(failure.retryAfter)).toBeGreaterThan(0);
    }
    const succeeded = statuses.filter((status) => status === 200).length;
    // The surviving replica keeps serving: most of the load still succeeds.
    expect(succeeded).toBeGreaterThan(total / 2);
    console.log(`[scale-out] replica killed mid-load: ${succeeded} of ${total} succeeded, ${total - succeeded} answered 503 (${results.filter((result) => result.status === 503).map((result) => result.code).join(", ") || "none"})`);

    // Only successes were charged, whichever router served them: one more request sees the exact count.
    const next = await upscale(0, key, image, "lanczos");
    expect(next.status).toBe(200);
    expect(next.remaining).toBe(limit - succeeded - 1);
  }, 180_000);

  it("keeps one exact quota across both routers", async () => {
    const key = await createKey(10);
    const image = dataUrl(await gradientPng(16, 16));
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => upscale(i, key, image, "lanczos")));
    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([...Array(10).fill(200), ...Array(6).fill(429)]);
  }, 60_000);

  it("a router also reaches replicas through a dns:/// name (the compose and Kubernetes form)", async () => {
    const service = await startTestService({ ...common, ATELIER_WORKER_ADDRESS: `dns:///localhost:${workerPorts[1]}` });
    try {
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
      const key = await service.createKey();
      const response = await service.post("/tools/upscale", { imageUrl: dataUrl(await gradientPng(8, 8)), scale: 2, model: "lanczos" }, key);
      expect(response.status).toBe(200);
    } finally {
      await service.close();
    }
  }, 60_000);

  it("the killed replica rejoins on its port without restarting anything else", async () => {
    workers[0] = await startWorker(0);
    const key = await createKey(1000);
    const image = dataUrl(await gradientPng(32, 32));
    const deadline = Date.now() + 60_000;
    let round = 0;
    // grpc-js reconnects with backoff: keep sending until the restarted replica takes calls.
    while (callsServedBy(workers[0]) === 0) {
      expect(Date.now(), "the restarted replica never received a call").toBeLessThan(deadline);
      const results = await Promise.all([0, 1, 2, 3].map((i) => upscale(i + round, key, image)));
      expect(results.map((result) => result.status)).toEqual([200, 200, 200, 200]);
      round += 1;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(callsServedBy(workers[0])).toBeGreaterThan(0);
    for (const router of routers) expect((await fetch(`${router}/readyz`)).status).toBe(200);
  }, 120_000);
});
