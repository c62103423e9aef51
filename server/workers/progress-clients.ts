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
import { BackgroundServiceClient, type RemoveBackgroundRequest, type RemoveBackgroundResponse } from "../../gen/atelier/background/v1/background_service.js";
import { GenerationServiceClient, type GenerateRequest, type GenerateResponse } from "../../gen/atelier/generation/v1/generation_service.js";
import { StyleTransferServiceClient, type StyleTransferRequest, type StyleTransferResponse } from "../../gen/atelier/style/v1/style_transfer_service.js";
import { UpscaleServiceClient, type UpscaleRequest, type UpscaleResponse } from "../../gen/atelier/upscale/v1/upscale_service.js";
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
  upscale(request: UpscaleRequest, options: CallOptions, onProgress: ProgressListener): Promise<UpscaleResponse>;
  styleTransfer(request: StyleTransferRequest, options: CallOptions, onProgress: ProgressListener): Promise<StyleTransferResponse>;
  removeBackground(request: RemoveBackgroundRequest, options: CallOptions, onProgress: ProgressListener): Promise<RemoveBackgroundResponse>;
  close(): void;
}

interface StreamMessage<Res> {
  step: number;
  totalSteps: number;
  /** Absent from generation, whose only stage is denoising. */
  stage?: string;
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
      else onProgress({ step: message.step, steps: message.totalSteps, stage: message.stage || stage });
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
  const insecure = credentials.createInsecure();
  const channel = workerChannelOptions(config);
  const generation = new GenerationServiceClient(addresses.generation, insecure, channel);
  const upscale = new UpscaleServiceClient(addresses.upscale, insecure, channel);
  const style = new StyleTransferServiceClient(addresses.style, insecure, channel);
  const background = new BackgroundServiceClient(addresses.background, insecure, channel);
  const deadline = (options: CallOptions) => options.deadlineMs ?? config.workers.deadlineMs;
  return {
    upscale: (request, options, onProgress) =>
      readStream<UpscaleResponse>((metadata, o) => upscale.upscaleStream({ request }, metadata, o), deadline(options), "tiles", onProgress, options.signal),
    styleTransfer: (request, options, onProgress) =>
      readStream<StyleTransferResponse>((metadata, o) => style.styleTransferStream({ request }, metadata, o), deadline(options), "tiles", onProgress, options.signal),
    removeBackground: (request, options, onProgress) =>
      readStream<RemoveBackgroundResponse>((metadata, o) => background.removeBackgroundStream({ request }, metadata, o), deadline(options), "tiles", onProgress, options.signal),
    generate: (request, options, onProgress) =>
      readStream<GenerateResponse>(
        (metadata, callOptions) => generation.generateStream({ request }, metadata, callOptions),
        deadline(options),
        "denoising",
        onProgress,
        options.signal,
      ),
    close: () => [generation, upscale, style, background].forEach((client) => client.close()),
  };
}
