/**
 * Worker calls that report progress as they go: the server-streaming RPCs, for background jobs.
 * Each resolves with the same response as its unary twin in worker-clients.ts, so a job's result
 * is exactly the synchronous one; cancelling the signal cancels the stream, which the worker sees
 * between two steps.
 */
import { credentials, Metadata, type ClientReadableStream } from "@grpc/grpc-js";
import type { AtelierConfig, WorkerServiceName } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { fromGrpcError } from "../../core/grpc-errors.js";
import { GenerationServiceClient, type GenerateRequest, type GenerateResponse } from "../../gen/atelier/generation/v1/generation_service.js";
import { workerChannelOptions, type CallOptions } from "./worker-clients.js";

/** `step` of `steps` done; `stage` names what is being done. */
export interface WorkerProgress {
  step: number;
  steps: number;
  stage: string;
}

export type ProgressListener = (progress: WorkerProgress) => void;

export interface ProgressClients {
  generate(request: GenerateRequest, options: CallOptions, onProgress: ProgressListener): Promise<GenerateResponse>;
  close(): void;
}

interface StreamMessage<Res> {
  step: number;
  totalSteps: number;
  result?: Res | undefined;
}

/** Reads a progress stream to its one result message. */
function readStream<Res>(
  open: (metadata: Metadata, options: { deadline: Date }) => ClientReadableStream<StreamMessage<Res>>,
  deadlineMs: number,
  stage: string,
  onProgress: ProgressListener,
  signal?: AbortSignal,
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof AtelierError ? signal.reason : new AtelierError("CANCELLED", "The request was cancelled.", { cause: signal.reason }));
      return;
    }
    const call = open(new Metadata(), { deadline: new Date(Date.now() + deadlineMs) });
    let result: Res | undefined;
    const onAbort = () => call.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    call.on("data", (message: StreamMessage<Res>) => {
      if (message.result) result = message.result;
      else onProgress({ step: message.step, steps: message.totalSteps, stage });
    });
    call.on("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(signal?.aborted && signal.reason instanceof AtelierError ? signal.reason : fromGrpcError(error as Parameters<typeof fromGrpcError>[0]));
    });
    call.on("end", () => {
      signal?.removeEventListener("abort", onAbort);
      if (result) resolve(result);
      else reject(new AtelierError("INTERNAL", `The worker's ${stage} stream ended without a result.`));
    });
  });
}

export function createProgressClients(config: AtelierConfig, addresses: Record<WorkerServiceName, string>): ProgressClients {
  const generation = new GenerationServiceClient(addresses.generation, credentials.createInsecure(), workerChannelOptions(config));
  const deadline = (options: CallOptions) => options.deadlineMs ?? config.workers.deadlineMs;
  return {
    generate: (request, options, onProgress) =>
      readStream<GenerateResponse>(
        (metadata, callOptions) => generation.generateStream({ request }, metadata, callOptions),
        deadline(options),
        "denoising",
        onProgress,
        options.signal,
      ),
    close: () => generation.close(),
  };
}
