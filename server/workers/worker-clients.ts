/**
 * Typed, promise-returning calls to the workers, each with the configured deadline, cancelled
 * when the HTTP client goes away, and with gRPC failures turned back into AtelierErrors.
 *
 * An address may name several replicas (`ipv4:10.0.0.5:50051,10.0.0.6:50051`, or a `dns:///`
 * name with several records); calls are spread over them round-robin.
 *
 * A worker that goes away (shut down, killed, restarting) is the server's failure, never the
 * client's: a call it drops is retried once, on whichever replica is ready first (every worker call
 * is pure compute, bytes in and bytes out, so running it again is safe), and otherwise answers 503
 * WORKER_UNAVAILABLE with Retry-After, which the quota gives back. Reconnection is tuned so a
 * restarted worker is used again within about a second of listening.
 */
import { credentials, makeGenericClientConstructor, Metadata, type Client, type ServiceError } from "@grpc/grpc-js";
import type { AtelierConfig, WorkerServiceName } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { fromGrpcError } from "../../core/grpc-errors.js";
import { withImageCodecs } from "../../core/image-message-codec.js";
import { outboundTraceparent } from "../../observability/trace-context.js";
import { BackgroundServiceClient, BackgroundServiceService, type RemoveBackgroundRequest, type RemoveBackgroundResponse } from "../../gen/atelier/background/v1/background_service.js";
import { CatalogServiceClient, type ListModelsRequest, type ListModelsResponse } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { GenerationServiceClient, GenerationServiceService, type GenerateRequest, type GenerateResponse } from "../../gen/atelier/generation/v1/generation_service.js";
import { PromptServiceClient, type ImprovePromptRequest, type ImprovePromptResponse } from "../../gen/atelier/prompt/v1/prompt_service.js";
import { StyleTransferServiceClient, StyleTransferServiceService, type StyleTransferRequest, type StyleTransferResponse } from "../../gen/atelier/style/v1/style_transfer_service.js";
import { UpscaleServiceClient, UpscaleServiceService, type UpscaleRequest, type UpscaleResponse } from "../../gen/atelier/upscale/v1/upscale_service.js";

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the configured deadline, in milliseconds. */
  deadlineMs?: number;
}

export interface WorkerClients {
  upscale(request: UpscaleRequest, options?: CallOptions): Promise<UpscaleResponse>;
  generate(request: GenerateRequest, options?: CallOptions): Promise<GenerateResponse>;
  styleTransfer(request: StyleTransferRequest, options?: CallOptions): Promise<StyleTransferResponse>;
  removeBackground(request: RemoveBackgroundRequest, options?: CallOptions): Promise<RemoveBackgroundResponse>;
  improvePrompt(request: ImprovePromptRequest, options?: CallOptions): Promise<ImprovePromptResponse>;
  listModels(request: ListModelsRequest, options?: CallOptions): Promise<ListModelsResponse>;
  close(): void;
}

/** How long a retry waits for some replica of the service to be ready (a restart in progress). */
export const RETRY_READY_WAIT_MS = 2_000;
/** Reconnection backoff towards a worker that went away: first retry and ceiling, in milliseconds. */
export const RECONNECT_INITIAL_BACKOFF_MS = 100;
export const RECONNECT_MAX_BACKOFF_MS = 500;

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (error: ServiceError | null, response: Res) => void,
) => { cancel(): void };

/** One attempt; a CANCELLED the router did not ask for means the worker dropped the call. */
function attemptUnary<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, deadline: Date, signal?: AbortSignal): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (signal?.aborted) {
      // Any signal (not only the facade's, whose reason is already an AtelierError) ends as CANCELLED.
      reject(signal.reason instanceof AtelierError ? signal.reason : new AtelierError("CANCELLED", "The request was cancelled.", { cause: signal.reason }));
      return;
    }
    const onAbort = () => call.cancel();
    const metadata = new Metadata();
    const traceparent = outboundTraceparent();
    if (traceparent) metadata.set("traceparent", traceparent);
    const call = method(request, metadata, { deadline }, (error, response) => {
      signal?.removeEventListener("abort", onAbort);
      if (!error) return resolve(response);
      const failure = fromGrpcError(error);
      if (failure.code === "CANCELLED" && !signal?.aborted) {
        reject(new AtelierError("WORKER_UNAVAILABLE", "The inference worker stopped while handling the request. Try again shortly.", { retryAfterSeconds: 1, cause: error }));
      } else reject(failure);
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves once `client`'s channel has a ready connection, or after `waitMs` (whichever first). */
function readyWithin(client: Client, waitMs: number): Promise<void> {
  return new Promise((resolve) => client.waitForReady(Date.now() + waitMs, () => resolve()));
}

/** The call, retried once when the worker was unreachable or went away mid-call. */
async function callUnary<Req, Res>(client: Client, method: UnaryMethod<Req, Res>, request: Req, deadlineMs: number, signal?: AbortSignal): Promise<Res> {
  const deadline = new Date(Date.now() + deadlineMs);
  try {
    return await attemptUnary(method, request, deadline, signal);
  } catch (error) {
    const retryable = error instanceof AtelierError && error.code === "WORKER_UNAVAILABLE" && !signal?.aborted;
    if (!retryable || deadline.getTime() - Date.now() <= 0) throw error;
    await readyWithin(client, Math.min(RETRY_READY_WAIT_MS, deadline.getTime() - Date.now()));
    return attemptUnary(method, request, deadline, signal);
  }
}

export function workerChannelOptions(config: AtelierConfig) {
  return {
    "grpc.max_receive_message_length": config.workers.maxMessageBytes,
    "grpc.max_send_message_length": config.workers.maxMessageBytes,
    "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    // grpc-js defaults to 1 s growing to 120 s: a worker restarted after an outage of a few seconds
    // would stay unused for several more.
    "grpc.initial_reconnect_backoff_ms": RECONNECT_INITIAL_BACKOFF_MS,
    "grpc.max_reconnect_backoff_ms": RECONNECT_MAX_BACKOFF_MS,
  };
}

// The generated clients, with images written and read without extra copies (core/image-message-codec.ts).
const UpscaleClient = makeGenericClientConstructor(withImageCodecs(UpscaleServiceService), UpscaleServiceClient.serviceName) as unknown as typeof UpscaleServiceClient;
const GenerationClient = makeGenericClientConstructor(withImageCodecs(GenerationServiceService), GenerationServiceClient.serviceName) as unknown as typeof GenerationServiceClient;
const StyleTransferClient = makeGenericClientConstructor(withImageCodecs(StyleTransferServiceService), StyleTransferServiceClient.serviceName) as unknown as typeof StyleTransferServiceClient;
const BackgroundClient = makeGenericClientConstructor(withImageCodecs(BackgroundServiceService), BackgroundServiceClient.serviceName) as unknown as typeof BackgroundServiceClient;

/** Clients for every worker service; `addresses` must name every service. */
export function createWorkerClients(config: AtelierConfig, addresses: Record<WorkerServiceName, string>): WorkerClients {
  const options = workerChannelOptions(config);
  const insecure = credentials.createInsecure();
  const upscale = new UpscaleClient(addresses.upscale, insecure, options);
  const generation = new GenerationClient(addresses.generation, insecure, options);
  const style = new StyleTransferClient(addresses.style, insecure, options);
  const background = new BackgroundClient(addresses.background, insecure, options);
  const prompt = new PromptServiceClient(addresses.prompt, insecure, options);
  const catalog = new CatalogServiceClient(addresses.catalog, insecure, options);
  const all: Client[] = [upscale, generation, style, background, prompt, catalog];
  const deadline = (callOptions?: CallOptions) => callOptions?.deadlineMs ?? config.workers.deadlineMs;
  const call = <Req, Res>(client: Client, method: UnaryMethod<Req, Res>, request: Req, o: CallOptions | undefined) =>
    callUnary(client, method.bind(client) as UnaryMethod<Req, Res>, request, deadline(o), o?.signal);
  return {
    upscale: (request, o) => call(upscale, upscale.upscale, request, o),
    generate: (request, o) => call(generation, generation.generate, request, o),
    styleTransfer: (request, o) => call(style, style.styleTransfer, request, o),
    removeBackground: (request, o) => call(background, background.removeBackground, request, o),
    improvePrompt: (request, o) => call(prompt, prompt.improvePrompt, request, o),
    listModels: (request, o) => call(catalog, catalog.listModels, request, o),
    close: () => all.forEach((client) => client.close()),
  };
}
