/**
 * Jobs through the TypeScript client against a real Atelier: create, wait with progress,
 * the raw result, list, events with resume, cancel. Skipped with a notice against a server that
 * does not serve `/api/v1/jobs` yet.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Atelier, AtelierError, AtelierImage, BadRequestError, ConflictError, type Job, type JobEvent } from "../../clients/typescript/src/node.js";
import { fileTempDir, testTempDir } from "../support/temp-dir.js";
import { gradientPng } from "../support/test-images.js";
import type { TestService } from "../support/test-service.js";
import { clientModelsAvailable, startClientTestService } from "./client-service.js";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.js";

let service: TestService;
let proxy: FaultProxy;
let client: Atelier;
let png: Buffer;
let served = false;

describe.runIf(clientModelsAvailable())("TypeScript client jobs", () => {
  const modelsDir = fileTempDir("test-models");
  beforeAll(async () => {
    service = await startClientTestService(modelsDir);
    proxy = await startFaultProxy(service.url);
    const key = await service.createKey("ts-jobs");
    client = new Atelier({ apiKey: key, baseURL: service.url });
    png = await gradientPng(24, 16);
    const probe = await fetch(`${service.url}/api/v1/jobs`, { headers: { authorization: `Bearer ${key}` } });
    served = probe.status === 200;
    if (!served) console.warn(`[typescript-jobs.test] SKIPPED: GET /api/v1/jobs answered ${probe.status}; this server does not serve jobs.`);
  });
  afterAll(async () => {
    await proxy?.close();
    await service?.close();
  });

  it("creates a job, waits for it with progress, and returns the synchronous result's shape", async (context) => {
    if (!served) return context.skip();
    const job = await client.jobs.create("tools.upscale", { image: png, scale: 2 });
    expect(job.id).toMatch(/^job_/);
    expect(job.meta?.status).toBe(202);
    const seen: string[] = [];
    const result = await job.wait({ onProgress: (current: Job<unknown>) => seen.push(current.status) });
    expect(seen.at(-1)).toBe("succeeded");
    expect(result.scale).toBe(2);
    expect(result.nativeScale).toBe(2);
    expect(result.data[0]).toBeInstanceOf(AtelierImage);
    expect(result.data[0]).toMatchObject({ width: 48, height: 32 });

    const raw = await client.jobs.result(job.id);
    expect(raw.mimeType).toMatch(/^image\/png/);
    expect(Buffer.from(raw.bytes).equals(Buffer.from(result.data[0]!.bytes()))).toBe(true);
    expect((await sharp(raw.bytes).metadata()).width).toBe(48);

    const listed = await client.jobs.list({ status: "succeeded" });
    expect(listed.data.map((entry) => entry.id)).toContain(job.id);
    expect(listed.rateLimit === null || typeof listed.rateLimit.remaining === "number").toBe(true);
  });

  it("follows a 202 job answer to a synchronous call, returning the same result", async (context) => {
    if (!served) return context.skip();
    const viaProxy = new Atelier({ apiKey: (client as unknown as { jobs: { http: { options: { apiKey: string } } } }).jobs.http.options.apiKey, baseURL: proxy.url });
    proxy.reset();
    proxy.queue({ kind: "prefer-async" });
    const result = await viaProxy.tools.upscale({ image: png, scale: 3 });
    expect(result.data[0]).toBeInstanceOf(AtelierImage);
    expect(result.data[0]).toMatchObject({ width: 72, height: 48 });
    expect(result.scale).toBe(3);
    expect(proxy.seen[0]!.method).toBe("POST");
    expect(proxy.seen.slice(1).every((request) => request.method === "GET" && request.url.startsWith("/api/v1/jobs/job_"))).toBe(true);
  });

  it("a retry of a POST whose connection dropped while the server works follows that work (one job), instead of colliding with it", async (context) => {
    if (!served) return context.skip();
    const key = (client as unknown as { jobs: { http: { options: { apiKey: string } } } }).jobs.http.options.apiKey;
    const impatient = new Atelier({ apiKey: key, baseURL: proxy.url, maxRetries: 1 });
    // About a second of Lanczos work: the retry arrives while it is still running.
    const big = await gradientPng(1024, 1024);
    proxy.reset();
    proxy.queue({ kind: "cut-after", ms: 300 });
    const before = (await client.jobs.list({ limit: 100 })).data.length;
    const result = await impatient.tools.upscale({ image: big, scale: 4, model: "lanczos" });
    expect(result.data[0]).toMatchObject({ width: 4096, height: 4096 });
    expect(proxy.seen[1]!.headers.prefer).toBe("respond-async");
    expect(proxy.seen[1]!.headers["idempotency-key"]).toBe(proxy.seen[0]!.headers["idempotency-key"]);
    expect((await client.jobs.list({ limit: 100 })).data.length).toBe(before + 1);
  });

  it("reads and rotates the webhook signing secret", async (context) => {
    if (!served) return context.skip();
    const first = await client.webhooks.secret();
    expect(first).toMatchObject({ object: "webhook_secret" });
    expect(first.secret).toMatch(/^whsec_/);
    expect((await client.webhooks.secret()).secret).toBe(first.secret);
    const rotated = await client.webhooks.rotateSecret();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(first.secret);
  });

  it("streams a finished job's events ending with where its result is, and resumes after a Last-Event-ID", async (context) => {
    if (!served) return context.skip();
    const job = await client.jobs.create("prompts.improve", { prompt: "a cat on a roof" });
    await job.wait();
    const events: JobEvent[] = [];
    for await (const event of client.jobs.events(job.id)) events.push(event);
    expect(events.length).toBeGreaterThanOrEqual(2);
    const last = events.at(-1)!;
    expect(last.event).toBe("result");
    expect(last.data).toEqual({ status: "succeeded", jobUrl: `/api/v1/jobs/${job.id}`, resultUrl: `/api/v1/jobs/${job.id}/result` });
    // The result is the job's, fetched after the event.
    expect((await client.jobs.get(job.id)).data.result).toMatchObject({ original: "a cat on a roof" });
    const resumed: JobEvent[] = [];
    for await (const event of job.events({ lastEventId: events[0]!.id! })) resumed.push(event);
    expect(resumed.map((event) => event.id)).toEqual(events.slice(1).map((event) => event.id));
  });

  it("atelier upscale --job shows the job and writes its result", async (context) => {
    if (!served) return context.skip();
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const fs = await import("node:fs");
    const path = await import("node:path");
    const dir = testTempDir("cli-job");
    fs.writeFileSync(path.join(dir, "photo.png"), png);
    const cli = path.resolve("clients", "typescript", "src", "cli", "main.ts");
    const env = { ...process.env, ATELIER_API_KEY: (client as unknown as { jobs: { http: { options: { apiKey: string } } } }).jobs.http.options.apiKey, ATELIER_BASE_URL: service.url };
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", cli, "upscale", path.join(dir, "photo.png"), "--scale", "3", "--job", "-o", path.join(dir, "big.png")], { env });
    expect(stdout.trim()).toBe(path.join(dir, "big.png"));
    expect(stderr).toMatch(/72x48 image\/png/);
    expect((await sharp(path.join(dir, "big.png")).metadata()).width).toBe(72);
  });

  it("a failed job throws the class the synchronous call throws (BadRequestError for INVALID_INPUT)", async () => {
    // A prompt naming nothing the doodle model draws is invalid input only the worker finds, once the job runs.
    const body = { prompt: "a lecture on quantum chromodynamics" } as const;
    const sync = await client.images.generate(body).catch((caught: unknown) => caught);
    const job = await client.jobs.create("images.generate", body);
    const inJob = await job.wait().catch((caught: unknown) => caught);
    expect(sync).toBeInstanceOf(BadRequestError);
    expect(inJob).toBeInstanceOf(BadRequestError);
    expect(inJob).toMatchObject({ status: 400, code: "INVALID_INPUT", message: (sync as BadRequestError).message });
  });

  it("cancels a queued job, and refuses (409, without retrying) to cancel a finished one", async (context) => {
    if (!served) return context.skip();
    // Several jobs at once so the last is still queued behind the others when it is cancelled; each
    // 4000x3600 out (14.4 MP, under the server's 16.8 MP output limit, so they run rather than fail at once).
    const big = await gradientPng(1000, 900);
    const jobs = await Promise.all([1, 2, 3, 4].map(() => client.jobs.create("tools.upscale", { image: big, scale: 4, model: "lanczos" })));
    const last = jobs.at(-1)!;
    await last.cancel();
    expect(last.status).toBe("canceled");
    const error = await last.wait().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AtelierError);
    expect((error as AtelierError).code).toBe("CANCELED");
    for (const result of await Promise.all(jobs.slice(0, -1).map((job) => job.wait()))) expect(result.data[0]).toMatchObject({ width: 4000, height: 3600 });

    const finished = new Atelier({ apiKey: (client as unknown as { jobs: { http: { options: { apiKey: string } } } }).jobs.http.options.apiKey, baseURL: proxy.url });
    proxy.reset();
    const conflict = await finished.jobs.cancel(jobs[0]!.id).catch((caught: unknown) => caught);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(proxy.seen).toHaveLength(1);
  });
});
