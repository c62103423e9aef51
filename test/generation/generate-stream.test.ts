/**
 * GenerateStream over real gRPC on loopback: progress messages, then exactly one result; refusals
 * end the stream with a status; cancelling the call stops the generator between steps.
 */
import { credentials, Server, ServerCredentials, status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { ERROR_CODE_METADATA_KEY } from "../../transport/grpc-errors.js";
import { createLogger } from "../../core/logger.js";
import {
  GenerateStreamRequest,
  GenerationServiceClient,
  type GenerateRequest,
  type GenerateStreamResponse,
} from "../../gen/atelier/generation/v1/generation_service.js";
import { generationServiceImplementation } from "../../workers/generation/generation-service.js";
import { GeneratorRegistry } from "../../workers/generation/generator-registry.js";
import type { WorkerContext } from "../../workers/worker-context.js";
import { createWorkerContext, startWorkerServer, type RunningWorker } from "../../workers/worker-server.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { fakeDiffusionEntry, fakeFamily } from "./fake-generators.js";

const modelsFolder = fileTempDir("test-models");
// Workers keep nothing in their data folder, so every worker here shares one.
const dataDir = fileTempDir("generate-stream");

const logger = createLogger("silent");
const clients: InstanceType<typeof GenerationServiceClient>[] = [];

function configFor(env: Record<string, string> = {}) {
  return loadConfig({ ATELIER_DATA_DIR: dataDir, LOG_LEVEL: "silent", ...env });
}

function clientFor(address: string) {
  const client = new GenerationServiceClient(address, credentials.createInsecure());
  clients.push(client);
  return client;
}

interface StreamOutcome {
  messages: GenerateStreamResponse[];
  error?: ServiceError;
}

function collect(client: InstanceType<typeof GenerationServiceClient>, request: Partial<GenerateRequest>): Promise<StreamOutcome> {
  const stream = client.generateStream(GenerateStreamRequest.fromPartial({ request }));
  const messages: GenerateStreamResponse[] = [];
  return new Promise((resolve) => {
    stream.on("data", (message: GenerateStreamResponse) => messages.push(message));
    stream.on("error", (error: ServiceError) => resolve({ messages, error }));
    stream.on("end", () => resolve({ messages }));
  });
}

afterAll(() => {
  for (const client of clients) client.close();
});

describe.skipIf(!hasMirrorModel("cvae-quickdraw"))("GenerateStream with cvae-quickdraw", () => {
  let worker: RunningWorker;

  beforeAll(async () => {
    const config = configFor({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["cvae-quickdraw"]) });
    worker = await startWorkerServer(config, logger, { host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await worker.shutdown(1000);
  });

  it("reports step 1 of 1, then the result", async () => {
    const { messages, error } = await collect(clientFor(worker.address), { prompt: "a mushroom", seed: 11, width: 64, height: 64 });
    expect(error).toBeUndefined();
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatchObject({ step: 1, totalSteps: 1 });
    expect(messages[0]!.result).toBeUndefined();
    const final = messages[1]!;
    expect(final).toMatchObject({ step: 1, totalSteps: 1, result: { model: "cvae-quickdraw", seed: 11, steps: 1 } });
    expect(final.result!.interpretation).toMatch(/mushroom/);
    expect(final.result!.image).toMatchObject({ mimeType: "image/png", width: 64, height: 64 });
    expect((await sharp(final.result!.image!.data).metadata()).width).toBe(64);
  });

  it("ends with INVALID_ARGUMENT listing the classes when the prompt names none", async () => {
    const { messages, error } = await collect(clientFor(worker.address), { prompt: "two cats" });
    expect(messages).toHaveLength(0);
    expect(error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error?.metadata.get(ERROR_CODE_METADATA_KEY)[0]).toBe("INVALID_INPUT");
    expect(error?.details).toMatch(/alarm clock, ambulance/);
  });
});

describe("GenerateStream with no model installed", () => {
  it("ends with FAILED_PRECONDITION naming the model to install, before any progress", async () => {
    const worker = await startWorkerServer(configFor(), logger, { host: "127.0.0.1", port: 0 });
    try {
      const { messages, error } = await collect(clientFor(worker.address), { prompt: "a red fox" });
      expect(messages).toHaveLength(0);
      expect(error?.code).toBe(GrpcStatus.FAILED_PRECONDITION);
      expect(error?.metadata.get(ERROR_CODE_METADATA_KEY)[0]).toBe("MODEL_NOT_INSTALLED");
      expect(error?.details).toContain("npm run models -- pull cvae-quickdraw");
    } finally {
      await worker.shutdown(1000);
    }
  });
});

describe("GenerateStream with a slow many-step generator", () => {
  let server: Server;
  let address: string;
  let context: WorkerContext;
  const family = fakeFamily({ totalSteps: 200, stepMs: 10 });

  beforeAll(async () => {
    context = createWorkerContext(configFor(), logger);
    const binding = generationServiceImplementation(context, {
      registry: new GeneratorRegistry().register(family.registration),
      entries: () => [fakeDiffusionEntry()],
    });
    server = new Server();
    server.addService(binding.definition, binding.implementation);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    address = `127.0.0.1:${port}`;
  });
  afterAll(async () => {
    server.forceShutdown();
    await context.runtime.dispose();
  });

  it("reports every step, in order, before the result", async () => {
    const { messages, error } = await collect(clientFor(address), { prompt: "a lighthouse", steps: 5, seed: 1 });
    expect(error).toBeUndefined();
    expect(messages.map((message) => [message.step, message.totalSteps, message.result !== undefined])).toEqual([
      [1, 5, false],
      [2, 5, false],
      [3, 5, false],
      [4, 5, false],
      [5, 5, false],
      [5, 5, true],
    ]);
    expect(messages[5]!.result).toMatchObject({ model: "test-diffusion", seed: 1, steps: 5 });
  });

  it("stops the generator when the client cancels mid-stream", async () => {
    family.runs.length = 0;
    const stream = clientFor(address).generateStream(GenerateStreamRequest.fromPartial({ request: { prompt: "a long one", seed: 2 } }));
    const outcome = new Promise<ServiceError>((resolve, reject) => {
      stream.on("data", (message: GenerateStreamResponse) => {
        if (message.step === 3) stream.cancel();
        if (message.result) reject(new Error("the result arrived despite the cancellation"));
      });
      stream.on("error", resolve);
      stream.on("end", () => reject(new Error("expected the stream to end with CANCELLED")));
    });
    expect((await outcome).code).toBe(GrpcStatus.CANCELLED);
    const run = family.runs[0]!;
    await run.done;
    expect(run.aborted).toBe(true);
    expect(run.stepsDone).toBeGreaterThanOrEqual(3);
    expect(run.stepsDone).toBeLessThan(20);
  });
});
