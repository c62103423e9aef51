/**
 * Work priority (core/work-priority.ts) across gRPC: a worker in another process queues the router's
 * background work behind calls, as the worker in the router's process does. A real worker on
 * loopback with one inference slot, held by jobs of its own queue; the router's real clients and a
 * raw generated client call it. What runs first is read from what the worker has answered while the
 * slot is held again: never from timing.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig, WORKER_SERVICES, type WorkerServiceName } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { inBackground } from "../../core/work-priority.js";
import { UpscaleRequest, UpscaleServiceClient, type UpscaleResponse } from "../../gen/atelier/upscale/v1/upscale_service.js";
import { createWorkerClients, type WorkerClients } from "../../server/workers/worker-clients.js";
import { WORK_PRIORITY_METADATA_KEY } from "../../transport/work-priority-metadata.js";
import type { WorkQueue } from "../../workers/work-queue.js";
import { createWorkerContext, startWorkerServer, type RunningWorker } from "../../workers/worker-server.js";
import { gradientPng } from "../support/test-images.js";

const logger = createLogger("silent");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-priority-"));
const config = loadConfig({ ATELIER_DATA_DIR: dataDir, LOG_LEVEL: "silent", ATELIER_WORKER_CONCURRENCY: "1" });
const context = createWorkerContext(config, logger);
const queue: WorkQueue = context.queue;

let worker: RunningWorker;
let router: WorkerClients;
let raw: UpscaleServiceClient;
let source: Buffer;

beforeAll(async () => {
  worker = await startWorkerServer(config, logger, { host: "127.0.0.1", port: 0 }, context);
  router = createWorkerClients(config, Object.fromEntries(WORKER_SERVICES.map((name) => [name, worker.address])) as Record<WorkerServiceName, string>);
  raw = new UpscaleServiceClient(worker.address, credentials.createInsecure());
  source = await gradientPng(40, 30);
});

afterAll(async () => {
  router?.close();
  raw?.close();
  await worker?.shutdown(500);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Takes the worker's one slot, as a long call would, until `release` (queued behind whatever waits at its priority). */
function holdSlot(): { release: () => void; held: Promise<void> } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { release, held: queue.run(() => gate) };
}

/** Resolves once `check` passes; fails after a deadline generous enough for any machine. */
async function eventually(check: () => void): Promise<void> {
  await vi.waitFor(check, { timeout: 10_000, interval: 5 });
}

/** Resolves once `count` jobs wait in the worker's queue (the calls sent have arrived and queued). */
async function waiting(count: number): Promise<void> {
  await eventually(() => expect(queue.waiting).toBe(count));
}

/** A promise's outcome so far, without waiting for it. */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return { promise, settled: () => settled };
}

function request(scale: number): UpscaleRequest {
  return UpscaleRequest.fromPartial({ image: { data: source, mimeType: "image/png" }, scale });
}

/** Upscale over the plain generated client, with `priority` as the metadata value when given. */
function rawUpscale(scale: number, priority: string | undefined): Promise<UpscaleResponse> {
  const metadata = new Metadata();
  if (priority !== undefined) metadata.set(WORK_PRIORITY_METADATA_KEY, priority);
  return new Promise((resolve, reject) =>
    raw.upscale(request(scale), metadata, { deadline: Date.now() + 10_000 }, (error: ServiceError | null, response) => (error ? reject(error) : resolve(response))),
  );
}

/**
 * With the slot held, `preview` (background) is queued first and `call` after it; a second hold then
 * queues behind the call. Once the first hold ends, the call is answered while the preview still
 * waits behind the second hold; had the preview gone first (as a normal call would, having come
 * first), it would be done and nothing would wait.
 */
async function expectCallBeforePreview(call: () => Promise<UpscaleResponse>): Promise<void> {
  const first = holdSlot();
  let second: ReturnType<typeof holdSlot> | undefined;
  const preview = tracked(inBackground(() => router.upscale(request(3))));
  try {
    await waiting(1);
    const answered = tracked(call());
    await waiting(2);
    second = holdSlot();
    first.release();
    await eventually(() => expect(answered.settled()).toBe(true));
    expect((await answered.promise).scale).toBe(2);
    expect(preview.settled()).toBe(false);
    expect(queue.waiting).toBe(1);
    second.release();
    expect((await preview.promise).scale).toBe(3);
  } finally {
    // A failed case leaves nothing held or queued for the next one.
    first.release();
    second?.release();
    await queue.drain();
  }
}

describe("work priority on a worker in another process", () => {
  it("queues the router's background call behind a call that came after it", async () => {
    await expectCallBeforePreview(() => router.upscale(request(2)));
  });

  it.each([
    ["sends no priority", undefined],
    ["sends an unknown priority", "urgent"],
    ["sends the background value in another case", "BACKGROUND"],
  ])("treats a caller that %s as a normal call", async (_, priority) => {
    await expectCallBeforePreview(() => rawUpscale(2, priority));
  });
});
