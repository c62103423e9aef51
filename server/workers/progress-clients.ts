/**
 * Worker calls that report progress as they go, for background jobs: the image operations over
 * their chunked RPCs (as synchronous calls go, worker-clients.ts, but not retried: a job's progress
 * never goes back), generation over its server-streaming RPC. Each resolves with the same response
 * as its unary twin, so a job's result is exactly the synchronous one; cancelling the signal
 * cancels the stream, which the worker sees between two steps.
 */
import { credentials, Metadata, type ClientReadableStream } from "@grpc/grpc-js";
import type { AtelierConfig, WorkerServiceName } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { fromGrpcError } from "../../transport/grpc-errors.js";
import type { RemoveBackgroundRequest, RemoveBackgroundResponse } from "../../gen/atelier/background/v1/background_service.js";
import { GenerationServiceClient, type GenerateRequest, type GenerateResponse } from "../../gen/atelier/generation/v1/generation_service.js";
import type { StyleTransferRequest, StyleTransferResponse } from "../../gen/atelier/style/v1/style_transfer_service.js";
import type { UpscaleRequest, UpscaleResponse } from "../../gen/atelier/upscale/v1/upscale_service.js";
import { BackgroundClient, callChunked, callDeadlineMs, StyleTransferClient, UpscaleClient, workerChannelOptions, type CallOptions } from "./worker-clients.js";

/** `step` of `steps` done; `stage` names what is being done. */
export interface WorkerProgress {
  step: number;
  steps: number;
  stage: string;
}

export type ProgressListener = (progress: WorkerProgress) => void;

/** The stage reported where the worker names none: image operations go tile by tile, generation step by step. */
export const STAGE_BY_DEFAULT = { image: "tiles", generate: "denoising" } as const;

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
  const upscale = new UpscaleClient(addresses.upscale, insecure, channel);
  const style = new StyleTransferClient(addresses.style, insecure, channel);
  const background = new BackgroundClient(addresses.background, insecure, channel);
  const deadline = (options: CallOptions) => callDeadlineMs(config, options);
  const chunked = (options: CallOptions, onProgress: ProgressListener) => ({
    deadlineMs: deadline(options),
    maxImageBytes: config.workers.maxMessageBytes,
    signal: options.signal,
    onProgress: (step: number, steps: number, stage: string) => onProgress({ step, steps, stage: stage || STAGE_BY_DEFAULT.image }),
    retry: false,
  });
  return {
    upscale: (request, options, onProgress) => callChunked(upscale, upscale.upscaleChunked.bind(upscale), upscale.upscale.bind(upscale), request, chunked(options, onProgress)),
    styleTransfer: (request, options, onProgress) => callChunked(style, style.styleTransferChunked.bind(style), style.styleTransfer.bind(style), request, chunked(options, onProgress)),
    removeBackground: (request, options, onProgress) =>
      callChunked(background, background.removeBackgroundChunked.bind(background), background.removeBackground.bind(background), request, chunked(options, onProgress)),
    generate: (request, options, onProgress) =>
      readStream<GenerateResponse>(
        (metadata, callOptions) => generation.generateStream({ request }, metadata, callOptions),
        deadline(options),
        STAGE_BY_DEFAULT.generate,
        onProgress,
        options.signal,
      ),
    close: () => [generation, upscale, style, background].forEach((client) => client.close()),
  };
}
