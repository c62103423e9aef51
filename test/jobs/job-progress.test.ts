/**
 * Jobs that report progress: generation on a real gRPC worker running a tiny Stable Diffusion
 * export step by step. Async equals sync for the same seed, SSE order and resume with
 * Last-Event-ID, and cancellation mid-run that frees the worker for the next job.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";
import { hasClipMerges } from "../generation/diffusion/tiny-export.js";
import { call, finishedJob, jobWhere, readEvents, submitAsync, type JobBody } from "./job-helpers.js";
import { startTinyGenerationWorker, TINY_MODEL, type TinyGenerationWorker } from "./tiny-generation-worker.js";

describe.skipIf(!hasClipMerges())("jobs with step progress (tiny diffusion worker)", () => {
  let worker: TinyGenerationWorker;
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    worker = await startTinyGenerationWorker({ channels: 16, depth: 2 });
    service = await startTestService({ ATELIER_GENERATION_WORKER: worker.address, ATELIER_JOB_CONCURRENCY: "1", ATELIER_WORKER_CONCURRENCY: "1" });
    key = await service.createKey("progress");
  });
  afterAll(async () => {
    await service?.close();
    await worker?.close();
  });

  const request = (steps: number, seed = 7) => ({ prompt: "a red fox in snow", model: TINY_MODEL, steps, seed, width: 64, height: 64 });

  it("gives the same image as the synchronous call for the same seed", async () => {
    const sync = (await (await service.post("/generate", request(6), key)).json()) as { data: { url: string }[]; seed: number; steps: number };
    const job = await submitAsync(service, "/generate", request(6), key);
    const done = await finishedJob(service, key, job.id);
    expect(done.status).toBe("succeeded");
    expect(done.progress).toMatchObject({ fraction: 1, step: 6, steps: 6, stage: "done" });
    const result = done.result as unknown as typeof sync;
    expect(result.seed).toBe(7);
    expect(result.steps).toBe(6);
    expect(result.data[0]!.url).toBe(sync.data[0]!.url);
  });

  it("streams status, every step and the result as SSE, in order, and resumes after Last-Event-ID", async () => {
    const job = await submitAsync(service, "/generate", request(5, 11), key);
    const response = await call(service, "GET", `/jobs/${job.id}/events`, key);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readEvents(response);
    expect(events.map((event) => event.event)).toEqual(["status", "status", "progress", "progress", "progress", "progress", "progress", "status", "result"]);
    expect(events.filter((event) => event.event === "status").map((event) => (event.data as { status: string }).status)).toEqual(["queued", "running", "succeeded"]);
    expect(events.filter((event) => event.event === "progress").map((event) => (event.data as { step: number }).step)).toEqual([1, 2, 3, 4, 5]);
    expect(events.filter((event) => event.event === "progress").map((event) => (event.data as { stage: string }).stage)).toEqual(Array(5).fill("denoising"));
    const ids = events.map((event) => event.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    // The result event says where the result is; asked for, it carries the result itself.
    expect(events.at(-1)!.data).toEqual({ status: "succeeded", jobUrl: `/api/v1/jobs/${job.id}`, resultUrl: `/api/v1/jobs/${job.id}/result` });
    const stored = await finishedJob(service, key, job.id);
    const inline = await readEvents(await call(service, "GET", `/jobs/${job.id}/events?include=result`, key));
    expect((inline.at(-1)!.data as { result: unknown }).result).toEqual(stored.result);

    const resumed = await readEvents(await call(service, "GET", `/jobs/${job.id}/events`, key, { "last-event-id": String(ids[4]) }));
    expect(resumed.map((event) => event.id)).toEqual(ids.slice(5));
    expect(resumed.at(-1)!.event).toBe("result");
  });

  it("cancels a running job within a step and frees the worker for the next job", async () => {
    const long = await submitAsync(service, "/generate", { ...request(100, 3), width: 256, height: 256 }, key);
    const started = Date.now();
    const running = await jobWhere(service, key, long.id, (job) => job.progress.step >= 3);
    const msPerStep = (Date.now() - started) / running.progress.step;
    const next = await submitAsync(service, "/generate", request(2, 5), key);
    expect((await call(service, "GET", `/jobs/${next.id}`, key)).status).toBe(200);

    const canceledAt = Date.now();
    const response = await call(service, "DELETE", `/jobs/${long.id}`, key);
    expect(response.status).toBe(200);
    const canceled = (await response.json()) as JobBody;
    expect(canceled.status).toBe("canceled");
    expect(canceled.error?.code).toBe("CANCELLED");

    const done = await finishedJob(service, key, next.id);
    expect(done.status).toBe("succeeded");
    // The worker runs one call at a time: had the canceled generation gone on, the next job
    // would have waited for its remaining ~95 steps.
    expect(Date.now() - canceledAt).toBeLessThan(msPerStep * 40);
    const after = await finishedJob(service, key, long.id);
    expect(after.status).toBe("canceled");
    expect(after.progress.step).toBeLessThan(100);
    expect((await call(service, "DELETE", `/jobs/${long.id}`, key)).status).toBe(409);
  });

  it("cancels a queued job before it starts", async () => {
    const blocker = await submitAsync(service, "/generate", { ...request(40, 1), width: 128, height: 128 }, key);
    const queued = await submitAsync(service, "/generate", request(2, 2), key);
    expect(queued.status).toBe("queued");
    expect(queued.queuePosition).toBeGreaterThanOrEqual(1);
    const response = await call(service, "DELETE", `/jobs/${queued.id}`, key);
    expect(((await response.json()) as JobBody).status).toBe("canceled");
    expect((await finishedJob(service, key, blocker.id)).status).toBe("succeeded");
    const after = await finishedJob(service, key, queued.id);
    expect(after.status).toBe("canceled");
    expect(after.startedAt).toBeNull();
  });
});
