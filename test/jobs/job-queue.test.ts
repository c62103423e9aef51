/**
 * The queue's guarantees over real HTTP and real SQLite: keys take turns, per-key and global caps,
 * quota counted once and refunded for server errors, queued jobs surviving a router restart, and a
 * job whose runner died retried once then failed.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteJobStore } from "../../jobs/sqlite-job-store.js";
import { MAX_JOB_ATTEMPTS } from "../../jobs/job-runner.js";
import { makeTempDir, testTempDir } from "../support/temp-dir.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { hasClipMerges } from "../generation/diffusion/tiny-export.js";
import { finishedJob, submitAsync } from "./job-helpers.js";
import { startTinyGenerationWorker, TINY_MODEL, type TinyGenerationWorker } from "./tiny-generation-worker.js";

const request = (steps: number, seed: number) => ({ prompt: "a lighthouse", model: TINY_MODEL, steps, seed, width: 64, height: 64 });

describe.skipIf(!hasClipMerges())("queue behaviour (tiny diffusion worker, one job at a time)", () => {
  let worker: TinyGenerationWorker;

  beforeAll(async () => {
    worker = await startTinyGenerationWorker({ channels: 16, depth: 2 });
  });
  afterAll(async () => {
    await worker?.close();
  });

  const start = (env: Record<string, string> = {}, dataDir?: string) =>
    startTestService({ ATELIER_GENERATION_WORKER: worker.address, ATELIER_JOB_CONCURRENCY: "1", ...env }, dataDir);

  it("lets a key with one job go before another key's backlog (round-robin by key)", async () => {
    const service = await start();
    try {
      const busy = await service.createKey("busy");
      const light = await service.createKey("light");
      const backlog = [];
      for (let seed = 1; seed <= 6; seed++) backlog.push(await submitAsync(service, "/generate", request(20, seed), busy));
      const single = await submitAsync(service, "/generate", request(2, 99), light);
      expect(single.status).toBe("queued");
      // Turns: the busy key's first job may already run; the light key is next, not seventh.
      expect(single.queuePosition).toBeLessThanOrEqual(2);
      const done = await finishedJob(service, light, single.id);
      const busyDone = await Promise.all(backlog.map((job) => finishedJob(service, busy, job.id)));
      const startedBefore = busyDone.filter((job) => Date.parse(job.startedAt!) < Date.parse(done.startedAt!));
      expect(startedBefore.length).toBeLessThanOrEqual(1);
      expect(busyDone.every((job) => job.status === "succeeded")).toBe(true);
    } finally {
      await service.close();
    }
  });

  it("refuses jobs over the per-key cap with 429 and over the queue cap with 503, both with Retry-After", async () => {
    const service = await start({ ATELIER_JOB_MAX_ACTIVE_PER_KEY: "2", ATELIER_JOB_MAX_QUEUED: "3" });
    try {
      const first = await service.createKey("first");
      const accepted = [await submitAsync(service, "/generate", request(30, 1), first), await submitAsync(service, "/generate", request(30, 2), first)];
      const refused = await service.post("/generate", request(2, 3), first, { prefer: "respond-async" });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await refused.json()) as { code: string; message: string }).message).toMatch(/2 queued or running jobs/);

      const others = await Promise.all([1, 2, 3].map((n) => service.createKey(`other-${n}`)));
      const outcomes = [];
      for (const other of others) outcomes.push((await service.post("/generate", request(2, 4), other, { prefer: "respond-async" })).status);
      expect(outcomes.filter((status) => status === 202).length).toBeGreaterThanOrEqual(1);
      const full = await service.post("/generate", request(2, 5), await service.createKey("late"), { prefer: "respond-async" });
      expect(full.status).toBe(503);
      expect(full.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await full.json()) as { code: string }).code).toBe("OVERLOADED");
      for (const job of accepted) await finishedJob(service, first, job.id);
    } finally {
      await service.close();
    }
  });

  it("keeps queued jobs across a router restart and runs them all", async () => {
    const dataDir = testTempDir("test");
    const first = await start({}, dataDir);
    const key = await first.createKey("restart");
    const jobs = [];
    for (let seed = 1; seed <= 5; seed++) jobs.push(await submitAsync(first, "/generate", request(30, seed), key));
    await first.close();
    const between = new SqliteJobStore(dataDir);
    const left = await Promise.all(jobs.map((job) => between.get(job.id)));
    await between.close();
    // Stopped mid-queue: the running one stays `running` (recovered on start), the rest `queued`.
    expect(left.filter((job) => job?.status === "queued").length).toBeGreaterThanOrEqual(3);

    const second = await start({}, dataDir);
    try {
      const done = await Promise.all(jobs.map((job) => finishedJob(second, key, job.id)));
      expect(done.map((job) => job.status)).toEqual(Array(5).fill("succeeded"));
      const sync = (await (await second.post("/generate", request(30, 3), key)).json()) as { data: { url: string }[] };
      expect((done[2]!.result as unknown as typeof sync).data[0]!.url).toBe(sync.data[0]!.url);
    } finally {
      await second.close();
    }
  });

  it("counts a job once at submission and refunds one that fails with a server error", async () => {
    // No generation worker at this address: the job fails with 503 WORKER_UNAVAILABLE.
    const service = await startTestService({ ATELIER_GENERATION_WORKER: "127.0.0.1:1", ATELIER_WORKER_DEADLINE_MS: "2000", ATELIER_RATE_LIMIT_PER_HOUR: "10" });
    try {
      const key = await service.createKey("refund");
      const submitted = await service.post("/generate", { prompt: "a cat" }, key, { prefer: "respond-async" });
      expect(submitted.headers.get("x-ratelimit-remaining")).toBe("9");
      const job = await finishedJob(service, key, ((await submitted.json()) as { id: string }).id);
      expect(job.status).toBe("failed");
      expect(job.error?.code).toMatch(/WORKER_UNAVAILABLE|DEADLINE_EXCEEDED/);
      const next = await service.post("/prompt/improve", { prompt: "a cat" }, key);
      expect(next.headers.get("x-ratelimit-remaining")).toBe("9");
    } finally {
      await service.close();
    }
  });
});

describe("a job whose runner died", () => {
  it(`is requeued after the first interruption and failed clearly after ${MAX_JOB_ATTEMPTS}`, async () => {
    const dataDir = makeTempDir("test");
    const store = new SqliteJobStore(dataDir);
    const limits = { maxActivePerKey: 10, maxQueued: 10 };
    const lost = { status: 500, body: { code: "INTERNAL" as const, message: "interrupted twice", requestId: "r" } };
    try {
      await store.insert({ id: "job_a", apiKeyId: "k", operation: "/v1/generate", input: {}, requestId: "r", webhookUrl: null, createdAtMs: 1 }, limits);
      expect((await store.claim("job_a", 2))?.attempts).toBe(1);
      expect(await store.recover(MAX_JOB_ATTEMPTS, lost, 3)).toEqual({ requeued: ["job_a"], failed: [] });
      expect((await store.get("job_a"))?.status).toBe("queued");
      expect((await store.claim("job_a", 4))?.attempts).toBe(2);
      expect(await store.recover(MAX_JOB_ATTEMPTS, lost, 5)).toEqual({ requeued: [], failed: ["job_a"] });
      const failed = await store.get("job_a");
      expect(failed).toMatchObject({ status: "failed", finishedAtMs: 5, error: lost });
    } finally {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
