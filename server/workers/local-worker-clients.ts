/**
 * Worker calls for the services whose worker runs in the router's process (transport/local-worker.ts):
 * the same operations as the gRPC clients, with the same deadline, cancellation, trace context and
 * progress, answered with the same errors, but with no serializing, framing or copying of images on
 * the event loop both share. Services whose worker runs elsewhere keep their gRPC clients.
 */
import type { AtelierConfig, WorkerServiceName } from "../../core/config.js";
import type { AtelierError } from "../../core/errors.js";
import { workerCallError } from "../../transport/grpc-errors.js";
import type { InProcessWorker, LocalWorker } from "../../transport/local-worker.js";
import { outboundTraceparent } from "../../observability/trace-context.js";
import { BackgroundServiceService } from "../../gen/atelier/background/v1/background_service.js";
import { CatalogServiceService } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { GenerationServiceService } from "../../gen/atelier/generation/v1/generation_service.js";
import { PromptServiceService } from "../../gen/atelier/prompt/v1/prompt_service.js";
import { StyleTransferServiceService } from "../../gen/atelier/style/v1/style_transfer_service.js";
import { UpscaleServiceService } from "../../gen/atelier/upscale/v1/upscale_service.js";
import { abortedError, callDeadlineMs, STAGE_BY_DEFAULT, stepListener, type ProgressCallOptions, type StepListener, type WorkerClients } from "./worker-clients.js";

/** Each operation's worker service and RPC. */
const OPERATIONS = {
  upscale: { service: "upscale", path: UpscaleServiceService.upscale.path },
  generate: { service: "generation", path: GenerationServiceService.generate.path },
  styleTransfer: { service: "style", path: StyleTransferServiceService.styleTransfer.path },
  removeBackground: { service: "background", path: BackgroundServiceService.removeBackground.path },
  improvePrompt: { service: "prompt", path: PromptServiceService.improvePrompt.path },
  listModels: { service: "catalog", path: CatalogServiceService.listModels.path },
} as const satisfies Record<string, { service: WorkerServiceName; path: string }>;

type Operation = keyof typeof OPERATIONS;

/**
 * One call: rejected at once with DEADLINE_EXCEEDED when `deadlineMs` passes, or with the caller's
 * reason when `signal` aborts, as a gRPC call is; the work is told to stop either way.
 */
export function callLocal<Res>(
  local: LocalWorker,
  path: string,
  request: object,
  options: { deadlineMs: number; signal?: AbortSignal; onProgress?: StepListener },
): Promise<Res> {
  const { deadlineMs, signal, onProgress } = options;
  if (signal?.aborted) return Promise.reject(abortedError(signal));
  return new Promise<Res>((resolve, reject) => {
    const stop = new AbortController();
    const end = (error: AtelierError) => {
      stop.abort(error);
      reject(error);
    };
    const deadline = setTimeout(() => end(workerCallError("DEADLINE_EXCEEDED")), deadlineMs);
    const onAbort = () => end(abortedError(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    local
      .call<Res>(path, request, { signal: stop.signal, traceparent: outboundTraceparent(), onProgress })
      .then(resolve, reject)
      .finally(() => {
        clearTimeout(deadline);
        signal?.removeEventListener("abort", onAbort);
      });
  });
}

/** `clients` with the operations of the in-process worker's services called locally, their progress reported as the RPCs report it. */
export function withLocalCalls(config: AtelierConfig, clients: WorkerClients, { worker: local, services }: InProcessWorker): WorkerClients {
  const localized = { ...clients };
  for (const [operation, { service, path }] of Object.entries(OPERATIONS) as [Operation, (typeof OPERATIONS)[Operation]][]) {
    if (!services.has(service)) continue;
    const stageByDefault: string = operation in STAGE_BY_DEFAULT ? STAGE_BY_DEFAULT[operation as keyof typeof STAGE_BY_DEFAULT] : "";
    (localized as Record<Operation, unknown>)[operation] = (request: object, options?: ProgressCallOptions) =>
      callLocal(local, path, request, {
        deadlineMs: callDeadlineMs(config, options),
        signal: options?.signal,
        onProgress: stepListener(options?.onProgress, stageByDefault),
      });
  }
  return localized;
}
