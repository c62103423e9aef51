/**
 * Routers sharing one queue through a real redis-server (ATELIER_REDIS_URL: BullMQ turns, the
 * Redis job store, pub/sub events): both routers take work; a job is seen, listed, followed and
 * canceled through the other router; idempotency keys and the per-key cap hold across routers;
 * keys take turns; queued jobs survive a restart of every router; a router killed mid-job (a
 * process of its own, SIGKILL) has its job retried by another router, and a second death fails it.
 * The routers share one data folder for their API keys (SQLite), as they would share PostgreSQL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JOB_ATTEMPTS } from "../../jobs/job-runner.js";
import { RedisJobStore } from "../../jobs/redis-job-store.js";
import { hasClipMerges } from "../generation/diffusion/tiny-export.js";
import { skipWithoutRedis, startRedisServer, type RedisServer } from "../support/redis-server.js";
import { makeTempDir } from "../support/temp-dir.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { call, finishedJob, getJob, jobWhere, submitAsync, type JobBody } from "./job-helpers.js";
import { startTinyGenerationWorker, TINY_MODEL, type TinyGenerationWorker } from "./tiny-generation-worker.js";

const request = (steps: number, seed: number) => ({ prompt: "a lighthouse", model: TINY_MODEL, steps, seed, width: 64, height: 64 });

/** Reads an SSE stream until the job's final event; returns the events' ids, types and data. */
async function readEvents(url: string, key: string, lastEventId?: number): Promise<{ id: number; type: string; data: unknown }[]> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}`, ...(lastEventId ? { "last-event-id": String(lastEventId) } : {}) } });
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.includes("data:"))
    .map((block) => {
      const field = (name: string) => block.split("\n").find((line) => line.startsWith(`${name}:`))?.slice(name.length + 1).trim();
      return { id: Number(field("id")), type: field("event") ?? "message", data: JSON.parse(field("data") ?? "null") as unknown };
    });
}

interface RouterProcess {
  url: string;
  child: ChildProcess;
  kill(): Promise<void>;
}

/** A router in its own process (test/jobs/router-process.ts), to be killed without any shutdown. */
async function spawnRouter(env: Record<string, string>): Promise<RouterProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/jobs/router-process.ts"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`router did not start:\n${output}`)), 120_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /READY (\S+)/.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`router exited (${code}):\n${output}`)));
  });
  return {
    url,
    child,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

describe.skipIf(!hasClipMerges() || skipWithoutRedis("shared job queue"))("two routers sharing one Redis queue (tiny diffusion worker)", () => {
  let redis: RedisServer;
  let worker: TinyGenerationWorker;
  let dataDir: string;
  let store: RedisJobStore;
  let inspector: Redis;

  beforeAll(async () => {
    [redis, worker] = await Promise.all([startRedisServer(), startTinyGenerationWorker({ channels: 16, depth: 2 })]);
    dataDir = makeTempDir("test");
    inspector = new Redis(redis.url);
    store = new RedisJobStore(inspector, { deliveryLeaseMs: 1_000 });
  }, 60_000);
  afterAll(async () => {
    inspector?.disconnect();
    await worker?.close();
    await redis?.dispose();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    ATELIER_REDIS_URL: redis.url,
    ATELIER_GENERATION_WORKER: worker.address,
    ATELIER_JOB_CONCURRENCY: "1",
    ATELIER_JOB_LEASE_SECONDS: "2",
    ...extra,
  });
  const startRouter = (extra: Record<string, string> = {}) => startTestService(env(extra), dataDir);
  const startPair = (extra: Record<string, string> = {}) => Promise.all([startRouter(extra), startRouter(extra)]);

  it("shares work, and shows, lists and streams (resumably) a job through the other router", async () => {
    const [a, b] = await startPair();
    try {
      const key = await a.createKey("shared");
      const jobs: JobBody[] = [];
      for (let seed = 1; seed <= 4; seed++) jobs.push(await submitAsync(a, "/generate", request(12, seed), key));
      // One job at a time per router: two running at once means both routers took work.
      const deadline = Date.now() + 30_000;
      let mostRunning = 0;
      while (Date.now() < deadline && mostRunning < 2) {
        const views = await Promise.all(jobs.map((job) => getJob(b, key, job.id)));
        mostRunning = Math.max(mostRunning, views.filter((job) => job.status === "running").length);
      }
      expect(mostRunning).toBe(2);

      const events = await readEvents(`${b.url}/api/v1/jobs/${jobs[3]!.id}/events`, key);
      expect(events.map((event) => event.type)).toContain("progress");
      expect(events.at(-1)!.type).toBe("result");
      expect(events.map((event) => event.id)).toEqual([...events.map((event) => event.id)].sort((x, y) => x - y));
      // Resumed through the other router from the middle: exactly the rest.
      const middle = events[Math.floor(events.length / 2)]!.id;
      const resumed = await readEvents(`${a.url}/api/v1/jobs/${jobs[3]!.id}/events`, key, middle);
      expect(resumed.map((event) => event.id)).toEqual(events.filter((event) => event.id > middle).map((event) => event.id));

      const done = await Promise.all(jobs.map((job) => finishedJob(b, key, job.id)));
      expect(done.map((job) => job.status)).toEqual(Array(4).fill("succeeded"));
      const listed = (await (await call(b, "GET", "/jobs?limit=3", key)).json()) as { data: JobBody[]; nextCursor: string | null };
      expect(listed.data.map((job) => job.id)).toEqual(jobs.slice(1).reverse().map((job) => job.id));
      const rest = (await (await call(a, "GET", `/jobs?limit=3&cursor=${listed.nextCursor}`, key)).json()) as { data: JobBody[] };
      expect(rest.data.map((job) => job.id)).toEqual([jobs[0]!.id]);
      const other = await a.createKey("other");
      expect((await call(b, "GET", `/jobs/${jobs[0]!.id}`, other)).status).toBe(404);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);

  it("stops a job running on one router when it is canceled through another", async () => {
    const a = await startRouter();
    let b: TestService | undefined;
    try {
      const key = await a.createKey("cancel");
      // A alone is up: the long job runs there.
      const long = await submitAsync(a, "/generate", request(100, 1), key);
      await jobWhere(a, key, long.id, (job) => job.status === "running" && job.progress.step >= 1);
      b = await startRouter();
      const canceled = await call(b, "DELETE", `/jobs/${long.id}`, key);
      expect(canceled.status).toBe(200);
      expect(((await canceled.json()) as JobBody).status).toBe("canceled");
      await b.close();
      b = undefined;
      // A runs one job at a time: the next one only starts once the canceled job has stopped.
      const next = await submitAsync(a, "/generate", request(2, 2), key);
      const finished = await finishedJob(a, key, next.id, 5_000);
      expect(finished.status).toBe("succeeded");
      expect((await getJob(a, key, long.id)).status).toBe("canceled");
    } finally {
      await Promise.all([a.close(), b?.close()]);
    }
  }, 120_000);

  it("keeps idempotency keys and the per-key cap across routers", async () => {
    const [a, b] = await startPair({ ATELIER_JOB_MAX_ACTIVE_PER_KEY: "2" });
    try {
      const key = await a.createKey("idempotent");
      const first = await submitAsync(a, "/generate", request(100, 1), key, { "idempotency-key": "same-1" });
      const again = await b.post("/generate", request(100, 1), key, { prefer: "respond-async", "idempotency-key": "same-1" });
      expect(((await again.json()) as JobBody).id).toBe(first.id);
      const changed = await b.post("/generate", request(100, 2), key, { prefer: "respond-async", "idempotency-key": "same-1" });
      expect(changed.status).toBe(422);

      const second = await submitAsync(b, "/generate", request(100, 3), key);
      const third = await a.post("/generate", request(2, 4), key, { prefer: "respond-async" });
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
      for (const job of [first, second]) expect((await finishedJob(a, key, job.id)).status).toBe("succeeded");
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);

  it("lets a key with one job go before another key's backlog, across routers", async () => {
    const [a, b] = await startPair();
    try {
      const busy = await a.createKey("busy");
      const light = await a.createKey("light");
      const backlog = [];
      for (let seed = 1; seed <= 8; seed++) backlog.push(await submitAsync(a, "/generate", request(60, seed), busy));
      const single = await submitAsync(b, "/generate", request(2, 99), light);
      expect(single, JSON.stringify(single)).toMatchObject({ status: "queued" });
      expect(single.queuePosition).toBeLessThanOrEqual(2);
      const done = await finishedJob(b, light, single.id);
      const busyDone = await Promise.all(backlog.map((job) => finishedJob(a, busy, job.id)));
      // Queued behind the backlog, the light key's job is the next one a router takes (the other
      // router may take one busy job in the same instant); first come, first served would run the
      // whole waiting backlog first.
      const between = busyDone.filter((job) => Date.parse(job.startedAt!) > Date.parse(single.createdAt) && Date.parse(job.startedAt!) < Date.parse(done.startedAt!));
      expect(between.length).toBeLessThanOrEqual(1);
      expect(busyDone.every((job) => job.status === "succeeded")).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);

  it("runs every queued job after all routers restart", async () => {
    const [a, b] = await startPair();
    const key = await a.createKey("restart");
    const jobs = [];
    for (let seed = 1; seed <= 5; seed++) jobs.push(await submitAsync(a, "/generate", request(100, seed), key));
    // Stopped mid-queue: each router's running job is handed back (`running`, retried), the rest wait.
    await Promise.all([a.close(), b.close()]);
    const left = await Promise.all(jobs.map((job) => store.get(job.id)));
    expect(left.filter((job) => job?.status === "queued").length).toBeGreaterThanOrEqual(3);

    const c = await startRouter();
    try {
      const done = await Promise.all(jobs.map((job) => finishedJob(c, key, job.id)));
      expect(done.map((job) => job.status)).toEqual(Array(5).fill("succeeded"));
    } finally {
      await c.close();
    }
  }, 120_000);

  it("delivers each webhook once, from one router, signed with the key's one secret", async () => {
    const received: { body: string; headers: Record<string, string> }[] = [];
    // The first attempt of each delivery fails, so retries are due on both routers at once.
    const failedOnce = new Set<string>();
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers as Record<string, string> });
        const id = req.headers["webhook-id"] as string;
        res.statusCode = failedOnce.has(id) ? 200 : 500;
        failedOnce.add(id);
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const [a, b] = await startPair({ ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1", ATELIER_WEBHOOK_RETRY_BASE_MS: "100" });
    try {
      const key = await a.createKey("webhooks");
      const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const jobs = [];
      for (const prompt of ["a lantern", "a kettle", "a harbour"]) jobs.push(await submitAsync(a, "/prompt/improve", { prompt, webhookUrl }, key));
      for (const job of jobs) {
        const done = await jobWhere(b, key, job.id, (current) => (current as { webhook?: { status: string } }).webhook?.status === "delivered");
        expect((done as { webhook?: { attempts: unknown[] } }).webhook?.attempts).toHaveLength(2);
      }
      // Both routers keep polling for due deliveries: nothing is sent twice.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(received).toHaveLength(6);
      const secret = ((await (await call(b, "GET", "/webhooks/secret", key)).json()) as { secret: string }).secret;
      for (const delivery of received) expect(() => new Webhook(secret).verify(delivery.body, delivery.headers)).not.toThrow();
    } finally {
      await Promise.all([a.close(), b.close()]);
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 120_000);

  describe("a router killed mid-job", () => {
    /** Submits a long job to a router process and waits until it reports progress there. */
    async function runningOn(router: RouterProcess, key: string, body: object = request(60, 7)): Promise<string> {
      const response = await fetch(`${router.url}/api/v1/generate`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}`, prefer: "respond-async" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };
      await until(id, (job) => job?.status === "running" && job.progress.step >= 1);
      return id;
    }

    /** Waits for `check` to hold of job `id`; a timeout names the job's last state, so a failure says what happened instead. */
    async function until(id: string, check: (job: Awaited<ReturnType<typeof store.get>>) => boolean, timeoutMs = 60_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const job = await store.get(id);
        if (check(job)) return;
        if (Date.now() > deadline) {
          const state = job && { status: job.status, attempts: job.attempts, progress: job.progress, error: job.error };
          throw new Error(`condition never held; the job was last ${JSON.stringify(state)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    async function keyFor(name: string): Promise<string> {
      const router = await startRouter();
      try {
        return await router.createKey(name);
      } finally {
        await router.close();
      }
    }

    it("has its job retried by another router, which completes it", async () => {
      const key = await keyFor("killed-once");
      const doomed = await spawnRouter(env({ ATELIER_DATA_DIR: dataDir }));
      let id: string;
      try {
        id = await runningOn(doomed, key);
      } finally {
        await doomed.kill();
      }
      const survivor = await startRouter();
      try {
        const job = await finishedJob(survivor, key, id, 60_000);
        expect(job.status).toBe("succeeded");
        expect((await store.get(id))?.attempts).toBe(2);
      } finally {
        await survivor.close();
      }
    }, 240_000);

    it(`fails the job clearly when its router dies ${MAX_JOB_ATTEMPTS} times`, async () => {
      const key = await keyFor("killed-twice");
      const first = await spawnRouter(env({ ATELIER_DATA_DIR: dataDir }));
      let id: string;
      try {
        // A job that never has to finish, long enough that the second router cannot finish it
        // before the test sees it running there (60 steps at 64 px did, once, under the full suite).
        id = await runningOn(first, key, { ...request(100, 7), width: 256, height: 256 });
      } finally {
        await first.kill();
      }
      const second = await spawnRouter(env({ ATELIER_DATA_DIR: dataDir }));
      try {
        await until(id, (job) => job?.attempts === 2 && job.status === "running" && job.progress.step >= 1);
      } finally {
        await second.kill();
      }
      const last = await startRouter();
      try {
        const job = await finishedJob(last, key, id, 60_000);
        expect(job.status).toBe("failed");
        expect(job.error?.message).toMatch(/interrupted 2 times/);
      } finally {
        await last.close();
      }
    }, 300_000);
  });
});
