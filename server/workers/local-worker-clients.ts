/**
 * Worker calls for the services whose worker runs in the router's process (transport/local-worker.ts):
 * the same operations as the gRPC clients, with the same deadline, cancellation, trace context and
 * progress, answered with the same errors, but with no serializing, framing or copying of images on
 * the event loop both share. Services whose worker runs elsewhere keep their gRPC clients.
 */
import type { AtelierConfig } from "../../core/config.js";
import type { AtelierError } from "../../core/errors.js";
import { workerCallError } from "../../transport/grpc-errors.js";
import type { InProcessWorker, LocalWorker } from "../../transport/local-worker.js";
import { outboundTraceparent } from "../../observability/trace-context.js";
import { abortedError, callDeadlineMs, stepListener, unaryMethods, WORKER_SERVICE_DEFINITIONS, type ProgressCallOptions, type StepListener, type WorkerClients } from "./worker-clients.js";

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

/** `clients` with the RPCs of the in-process worker's services called locally, their progress reported as the RPCs report it. */
export function withLocalCalls(config: AtelierConfig, clients: WorkerClients, { worker: local, services }: InProcessWorker): WorkerClients {
  const localized: Record<string, unknown> = { ...clients };
  for (const service of services) {
    for (const [name, { path }] of unaryMethods(WORKER_SERVICE_DEFINITIONS[service])) {
      localized[name] = (request: object, options?: ProgressCallOptions) =>
        callLocal(local, path, request, { deadlineMs: callDeadlineMs(config, options), signal: options?.signal, onProgress: stepListener(options?.onProgress) });
    }
  }
  return localized as WorkerClients;
}
