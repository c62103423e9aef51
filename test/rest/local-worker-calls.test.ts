/**
 * The router's calls to the worker in its own process, made without gRPC (transport/local-worker.ts):
 * REST calls and jobs are answered with the worker's gRPC server shut down; the worker side gives
 * a call's work the same errors, progress, cancellation and metrics as its RPC, and refuses new
 * calls while letting running ones finish when it shuts down; the router side answers a deadline
 * or a caller gone at once and tells the work to stop.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PromptServiceService, type ImprovePromptRequest, type ImprovePromptResponse } from "../../gen/atelier/prompt/v1/prompt_service.js";
import { createLogger } from "../../core/logger.js";
import { AtelierError } from "../../core/errors.js";
import { metricsRegistry } from "../../observability/metrics.js";
import { LocalCalls } from "../../workers/local-calls.js";
import { unaryHandler } from "../../workers/grpc-handler.js";
import { reportProgress } from "../../workers/work-progress.js";
import { callLocal } from "../../server/workers/local-worker-clients.js";
import { bytesOfDataUrl, dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { call, finishedJob, readEvents } from "../jobs/job-helpers.js";
import sharp from "sharp";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";

const modelsFolder = fileTempDir("test-models");

const PATH = PromptServiceService.improvePrompt.path;
const request: ImprovePromptRequest = { prompt: "a lighthouse", style: "", mood: "", variants: 1, maxTokens: 0 };

/** A worker whose ImprovePrompt runs `work`. */
function workerRunning(work: (request: ImprovePromptRequest, signal: AbortSignal) => Promise<ImprovePromptResponse>) {
  const logger = createLogger("silent");
  return new LocalCalls([{ definition: PromptServiceService, implementation: { improvePrompt: unaryHandler(logger, "ImprovePrompt", work) } }], logger);
}

const answer = (text: string): ImprovePromptResponse => ({ variants: [{ prompt: text, negativePrompt: "", subject: "" }] as ImprovePromptResponse["variants"], model: "test", seed: 1 });

/** Resolves when `signal` aborts, with its reason. */
const abortedWith = (signal: AbortSignal) => new Promise<unknown>((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));

async function callsCounted(code: string): Promise<number> {
  const metric = (await metricsRegistry.getSingleMetric("atelier_worker_calls_total")?.get())?.values ?? [];
  return metric.find((value) => value.labels.method === "ImprovePrompt" && value.labels.code === code)?.value ?? 0;
}

describe("the worker's local calls", () => {
  it("answer with the work's response and count the call as its RPC would", async () => {
    const before = await callsCounted("OK");
    const worker = workerRunning(async (received) => answer(`${received.prompt}, at dusk`));
    await expect(worker.call(PATH, request, { signal: new AbortController().signal })).resolves.toEqual(answer("a lighthouse, at dusk"));
    expect(await callsCounted("OK")).toBe(before + 1);
  });

  it("reject with the work's AtelierError as it is, and anything else as INTERNAL with the public message", async () => {
    const refused = workerRunning(async () => {
      throw new AtelierError("INVALID_INPUT", "No.", { issues: [{ path: "prompt", message: "No." }] });
    });
    await expect(refused.call(PATH, request, { signal: new AbortController().signal })).rejects.toMatchObject({ code: "INVALID_INPUT", message: "No.", issues: [{ path: "prompt" }] });
    const broken = workerRunning(async () => {
      throw new TypeError("x is undefined");
    });
    await expect(broken.call(PATH, request, { signal: new AbortController().signal })).rejects.toMatchObject({ code: "INTERNAL", message: "The server failed to process the request. Try again later." });
    await expect(broken.call("/atelier.prompt.v1.PromptService/Nothing", request, { signal: new AbortController().signal })).rejects.toMatchObject({ code: "INTERNAL" });
  });

  it("report the work's progress, and stop reporting once the caller has gone", async () => {
    const caller = new AbortController();
    const worker = workerRunning(async (_request, signal) => {
      reportProgress(1, 3, "thinking");
      reportProgress(2, 3, "");
      caller.abort();
      reportProgress(3, 3, "late");
      return signal.aborted ? answer("stopped") : answer("went on");
    });
    const seen: string[] = [];
    const response = await worker.call(PATH, request, { signal: caller.signal, onProgress: (step, steps, stage) => seen.push(`${step}/${steps} ${stage}`) });
    expect(seen).toEqual(["1/3 thinking", "2/3 "]);
    expect(response).toEqual(answer("stopped"));
  });

  it("give the work CANCELLED as its signal's reason, whatever the caller aborted with", async () => {
    const caller = new AbortController();
    let reason: Promise<unknown> | undefined;
    const worker = workerRunning(async (_request, signal) => {
      reason = abortedWith(signal);
      caller.abort(new Error("gone"));
      throw await reason;
    });
    await expect(worker.call(PATH, request, { signal: caller.signal })).rejects.toMatchObject({ code: "CANCELLED" });
    await expect(reason).resolves.toBeInstanceOf(AtelierError);
  });

  it("refuse new calls with 503 once draining, and let a running one finish first", async () => {
    let finish: () => void = () => undefined;
    const worker = workerRunning(() => new Promise((resolve) => (finish = () => resolve(answer("finished")))));
    const running = worker.call(PATH, request, { signal: new AbortController().signal });
    let drained = false;
    const draining = worker.drain(60_000).then(() => (drained = true));
    await expect(worker.call(PATH, request, { signal: new AbortController().signal })).rejects.toMatchObject({ code: "WORKER_UNAVAILABLE", retryAfterSeconds: 5 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(drained).toBe(false);
    finish();
    await expect(running).resolves.toEqual(answer("finished"));
    await draining;
    expect(drained).toBe(true);
  });

  it("stop waiting for a running call after the grace period", async () => {
    const worker = workerRunning(() => new Promise(() => undefined));
    void worker.call(PATH, request, { signal: new AbortController().signal });
    const started = Date.now();
    await worker.drain(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});

describe("the router's local calls", () => {
  it("answer 504 DEADLINE_EXCEEDED when the deadline passes, and tell the work to stop", async () => {
    let reason: Promise<unknown> | undefined;
    const worker = workerRunning((_request, signal) => {
      reason = abortedWith(signal);
      return new Promise(() => undefined);
    });
    await expect(callLocal(worker, PATH, request, { deadlineMs: 30 })).rejects.toMatchObject({ code: "DEADLINE_EXCEEDED" });
    await expect(reason).resolves.toMatchObject({ code: "CANCELLED" });
  });

  it("answer with the caller's reason when it goes away, and tell the work to stop", async () => {
    let reason: Promise<unknown> | undefined;
    const caller = new AbortController();
    const worker = workerRunning((_request, signal) => {
      reason = abortedWith(signal);
      return new Promise(() => undefined);
    });
    const call = callLocal(worker, PATH, request, { deadlineMs: 60_000, signal: caller.signal });
    caller.abort(new AtelierError("CANCELLED", "The client went away."));
    await expect(call).rejects.toMatchObject({ code: "CANCELLED", message: "The client went away." });
    await expect(reason).resolves.toMatchObject({ code: "CANCELLED" });
    await expect(callLocal(worker, PATH, request, { deadlineMs: 60_000, signal: caller.signal })).rejects.toMatchObject({ code: "CANCELLED" });
  });
});

describe("a service with its worker in process", () => {
  let service: TestService;
  let key: string;
  let png: Buffer;

  beforeAll(async () => {
    service = await startTestService({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["cvae-quickdraw"]) });
    key = await service.createKey("local");
    png = await gradientPng(40, 30);
    // Every call below must reach the worker without its gRPC server.
    service.worker!.server.forceShutdown();
  });
  afterAll(async () => {
    await service?.close();
  });

  it("answers REST calls", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { model: string; data: { url: string }[] };
    expect(body.model).toBe("lanczos");
    expect(await sharp(bytesOfDataUrl(body.data[0]!.url)).metadata()).toMatchObject({ width: 80, height: 60, format: "png" });
  });

  it("answers the worker's refusals with their own status", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(Buffer.from("not an image at all")) }, key);
    expect(response.status).toBe(422);
    expect(((await response.json()) as { code: string }).code).toBe("IMAGE_UNDECODABLE");
  });

  it("runs jobs", async () => {
    const submitted = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 3 }, key, { prefer: "respond-async" });
    expect(submitted.status).toBe(202);
    const job = await finishedJob(service, key, ((await submitted.json()) as { id: string }).id);
    expect(job.status).toBe("succeeded");
    expect(job.result?.data?.[0]).toMatchObject({ width: 120, height: 90 });
  });

  it("reports a generation job's steps", async () => {
    const submitted = await service.post("/generate", { prompt: "an owl", model: "cvae-quickdraw" }, key, { prefer: "respond-async" });
    expect(submitted.status).toBe(202);
    const job = await finishedJob(service, key, ((await submitted.json()) as { id: string }).id);
    expect(job.status).toBe("succeeded");
    const steps = (await readEvents(await call(service, "GET", `/jobs/${job.id}/events`, key))).filter((event) => event.event === "progress");
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.at(-1)!.data).toMatchObject({ fraction: 1, stage: "denoising" });
  });
});
