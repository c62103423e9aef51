/**
 * Worker calls that report progress (a job's calls): the router's createWorkerClients against a real
 * gRPC server on loopback whose work is held in the test's hands. An image operation reports over
 * its chunked RPC and generation over GenerateStream, answering as the same call without a listener
 * does; aborting such a call or passing its deadline ends it with the synchronous call's error and
 * stops the worker's work.
 */
import { Server, ServerCredentials, type ServerWritableStream } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, WORKER_SERVICES, type WorkerServiceName } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import { toGrpcStatus } from "../../transport/grpc-errors.js";
import { withImageCodecs } from "../../transport/image-message-codec.js";
import {
  GenerationServiceService,
  type GenerateRequest,
  type GenerateResponse,
  type GenerateStreamRequest,
  type GenerateStreamResponse,
} from "../../gen/atelier/generation/v1/generation_service.js";
import { UpscaleRequest, UpscaleServiceService, type UpscaleResponse } from "../../gen/atelier/upscale/v1/upscale_service.js";
import { createWorkerClients, type ProgressCallOptions, type WorkerClients, type WorkerProgress } from "../../server/workers/worker-clients.js";
import { abortSignalFor, unaryHandler } from "../../workers/grpc-handler.js";
import { reportProgress } from "../../workers/work-progress.js";
import { withChunkedTwins } from "../../workers/worker-server.js";

const logger = createLogger("silent");
const MAX_IMAGE_BYTES = 8 * 2 ** 20;

/** Signals of work the worker was asked to do and has not finished, resolved when the work is told to stop. */
const stopped: Promise<unknown>[] = [];
/** Work that reports `steps` steps, then waits for its call to end when `model` is "hold". */
async function work(model: string, steps: number, signal: AbortSignal, report: (step: number) => void): Promise<void> {
  for (let step = 1; step <= steps; step++) report(step);
  if (model !== "hold") return;
  stopped.push(new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true })));
  await new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
}

async function upscale(request: UpscaleRequest, signal: AbortSignal): Promise<UpscaleResponse> {
  await work(request.model, 2, signal, (step) => reportProgress(step, 2, "tiles"));
  return { image: { data: Buffer.from("upscaled"), mimeType: "image/png", width: 2, height: 2 }, model: request.model, scale: request.scale, nativeScale: 2, steps: ["x2"] };
}

async function generate(request: GenerateRequest, signal: AbortSignal, onStep: (step: number) => void = () => undefined): Promise<GenerateResponse> {
  await work(request.model, 3, signal, onStep);
  return { image: { data: Buffer.from("drawn"), mimeType: "image/png", width: 8, height: 8 }, model: request.model, seed: 4, steps: 3, interpretation: "" };
}

/** GenerateStream as the generation worker serves it: a message per step, then one with the result. */
function generateStream(call: ServerWritableStream<GenerateStreamRequest, GenerateStreamResponse>): void {
  const signal = abortSignalFor(call);
  generate(call.request.request!, signal, (step) => call.write({ step, totalSteps: 3, stage: "denoising" })).then(
    (result) => {
      call.write({ step: 3, totalSteps: 3, stage: "", result });
      call.end();
    },
    (error: unknown) => call.emit("error", toGrpcStatus(error instanceof AtelierError ? error : new AtelierError("INTERNAL", String(error)))),
  );
}

let server: Server;
let router: WorkerClients;

beforeAll(async () => {
  server = new Server();
  const upscaleBinding = withChunkedTwins(
    { definition: UpscaleServiceService, implementation: { upscale: unaryHandler<UpscaleRequest, UpscaleResponse>(logger, "Upscale", upscale) } },
    logger,
    MAX_IMAGE_BYTES,
  );
  server.addService(withImageCodecs(UpscaleServiceService), upscaleBinding.implementation);
  server.addService(GenerationServiceService, { generate: unaryHandler<GenerateRequest, GenerateResponse>(logger, "Generate", (request, signal) => generate(request, signal)), generateStream });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  const addresses = Object.fromEntries(WORKER_SERVICES.map((name) => [name, `127.0.0.1:${port}`])) as Record<WorkerServiceName, string>;
  router = createWorkerClients(loadConfig({ LOG_LEVEL: "silent" }), addresses);
});
afterAll(() => {
  router?.close();
  server?.forceShutdown();
});

const upscaleRequest = (model: string) => UpscaleRequest.fromPartial({ image: { data: Buffer.from("source"), mimeType: "image/png", width: 1, height: 1 }, scale: 2, model });
const generateRequest = (model: string): GenerateRequest => ({ prompt: "an owl", width: 8, height: 8, model, negativePrompt: "", steps: 3, scheduler: "", outputFormat: 0 });

/** The call's failure, after aborting it at its first progress report (a call the abort misses ends at its deadline instead). */
async function abortedAtFirstStep(call: (options: ProgressCallOptions) => Promise<unknown>): Promise<AtelierError> {
  const controller = new AbortController();
  const failure = await call({ signal: controller.signal, deadlineMs: 5_000, onProgress: () => controller.abort() }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(AtelierError);
  return failure as AtelierError;
}

describe("worker calls that report progress", () => {
  it("report an image operation's steps over its chunked RPC, and answer as without a listener", async () => {
    const progress: WorkerProgress[] = [];
    const answer = await router.upscale(upscaleRequest("quick"), { onProgress: (report) => progress.push(report) });
    expect(progress).toEqual([
      { step: 1, steps: 2, stage: "tiles" },
      { step: 2, steps: 2, stage: "tiles" },
    ]);
    const plain = await router.upscale(upscaleRequest("quick"));
    expect({ ...answer, image: { ...answer.image, data: answer.image!.data.toString() } }).toEqual({ ...plain, image: { ...plain.image, data: plain.image!.data.toString() } });
  });

  it("report generation's steps over GenerateStream, and answer as the unary call does", async () => {
    const progress: WorkerProgress[] = [];
    const answer = await router.generate(generateRequest("quick"), { onProgress: (report) => progress.push(report) });
    expect(progress).toEqual([1, 2, 3].map((step) => ({ step, steps: 3, stage: "denoising" })));
    const plain = await router.generate(generateRequest("quick"));
    expect({ ...answer, image: { ...answer.image, data: Buffer.from(answer.image!.data).toString() } }).toEqual({
      ...plain,
      image: { ...plain.image, data: Buffer.from(plain.image!.data).toString() },
    });
  });

  it.each([
    ["an image operation (chunked RPC)", (options: ProgressCallOptions) => router.upscale(upscaleRequest("hold"), options)],
    ["generation (GenerateStream)", (options: ProgressCallOptions) => router.generate(generateRequest("hold"), options)],
  ])("cancel %s when the caller aborts, and the worker's work is told to stop", async (_name, call) => {
    stopped.length = 0;
    const failure = await abortedAtFirstStep(call);
    expect(failure.code).toBe("CANCELLED");
    expect(failure.httpStatus).toBe(499);
    expect(stopped).toHaveLength(1);
    await expect(stopped[0]).resolves.toMatchObject({ code: "CANCELLED" });
  });

  it.each([
    ["an image operation (chunked RPC)", (options: ProgressCallOptions) => router.upscale(upscaleRequest("hold"), options)],
    ["generation (GenerateStream)", (options: ProgressCallOptions) => router.generate(generateRequest("hold"), options)],
  ])("end %s at its deadline with DEADLINE_EXCEEDED, and the worker's work is told to stop", async (_name, call) => {
    stopped.length = 0;
    const progress: WorkerProgress[] = [];
    const failure = await call({ deadlineMs: 300, onProgress: (report) => progress.push(report) }).then(
      () => undefined,
      (error: unknown) => error as AtelierError,
    );
    expect(failure).toMatchObject({ code: "DEADLINE_EXCEEDED", httpStatus: 504 });
    expect(progress.length).toBeGreaterThan(0);
    await expect(stopped[0]).resolves.toMatchObject({ code: "CANCELLED" });
  });
});
