/**
 * Typed, promise-returning calls to the workers, each with the configured deadline, cancelled
 * when the HTTP client goes away (or the job is canceled), and with gRPC failures turned back into
 * AtelierErrors. Each carries in its metadata the request's trace context and the priority of the
 * work that made it (core/work-priority.ts), which the worker queues it by.
 *
 * The calls are made from the workers' generated service definitions: one call per unary RPC, named
 * and typed as the RPC is, so an RPC added to a proto is a call here with nothing written by hand.
 * An RPC's twins, where its proto declares them, carry it: `<Rpc>Chunked` always (images go in
 * chunks, transport/image-chunks.ts), `<Rpc>Stream` when the caller wants progress. A call given an
 * `onProgress` listener (background jobs) reports the worker's progress and resolves with the same
 * response as one without, so a job's result is exactly the synchronous one.
 *
 * An address may name several replicas (`ipv4:10.0.0.5:50051,10.0.0.6:50051`, or a `dns:///`
 * name with several records); calls are spread over them round-robin.
 *
 * A worker that goes away (shut down, killed, restarting) is the server's failure, never the
 * client's: a call it drops is retried once, on whichever replica is ready first (every worker call
 * is pure compute, bytes in and bytes out, so running it again is safe), and otherwise answers 503
 * WORKER_UNAVAILABLE with Retry-After, which the quota gives back. A call that reports progress is
 * not retried: progress already reported would go back to the start. Reconnection is tuned so a
 * restarted worker is used again within about a second of listening.
 */
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status as GrpcStatus,
  type Client,
  type ClientDuplexStream,
  type ClientReadableStream,
  type MethodDefinition,
  type ServiceDefinition,
  type ServiceError,
} from "@grpc/grpc-js";
import { WORKER_SERVICES, type AtelierConfig, type WorkerServiceName } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { currentWorkPriority } from "../../core/work-priority.js";
import { fromGrpcError } from "../../transport/grpc-errors.js";
import { GRPC_FLOW_CONTROL_OPTION } from "../../transport/grpc-flow-control.js";
import { setWorkPriority } from "../../transport/work-priority-metadata.js";
import { chunkedMessages, ImageAssembly, withGatheredImage, writeInTurn, type ChunkedRequest, type ChunkedResponse, type WithImage } from "../../transport/image-chunks.js";
import { withImageCodecs } from "../../transport/image-message-codec.js";
import { outboundTraceparent } from "../../observability/trace-context.js";
import { BackgroundServiceService } from "../../gen/atelier/background/v1/background_service.js";
import { CatalogServiceService } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { GenerationServiceService } from "../../gen/atelier/generation/v1/generation_service.js";
import { PromptServiceService } from "../../gen/atelier/prompt/v1/prompt_service.js";
import { StyleTransferServiceService } from "../../gen/atelier/style/v1/style_transfer_service.js";
import { UpscaleServiceService } from "../../gen/atelier/upscale/v1/upscale_service.js";

/** Each worker service's generated definition, under the name its address is configured by (core/config.ts). */
export const WORKER_SERVICE_DEFINITIONS = {
  upscale: UpscaleServiceService,
  generation: GenerationServiceService,
  style: StyleTransferServiceService,
  background: BackgroundServiceService,
  prompt: PromptServiceService,
  catalog: CatalogServiceService,
} as const satisfies Record<WorkerServiceName, ServiceDefinition>;

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the configured deadline, in milliseconds. */
  deadlineMs?: number;
}

/** `step` of `steps` done; `stage` names what is being done. */
export interface WorkerProgress {
  step: number;
  steps: number;
  stage: string;
}

export type ProgressListener = (progress: WorkerProgress) => void;

export interface ProgressCallOptions extends CallOptions {
  /** Called as the worker reports progress; the call is then not retried. */
  onProgress?: ProgressListener;
}

/** `step` of `steps` of the named stage done, as the worker sends it. */
export type StepListener = (step: number, steps: number, stage: string) => void;

/** `onProgress` fed from a worker's step reports. */
export function stepListener(onProgress: ProgressListener | undefined): StepListener | undefined {
  return onProgress && ((step, steps, stage) => onProgress({ step, steps, stage }));
}

/** A call's deadline in milliseconds: its own, else the configured one. */
export function callDeadlineMs(config: AtelierConfig, options?: CallOptions): number {
  return options?.deadlineMs ?? config.workers.deadlineMs;
}

/** One promise-returning call per unary RPC of `Definition`, under the RPC's generated name. */
type UnaryCalls<Definition> = {
  [Name in keyof Definition as Definition[Name] extends { requestStream: false; responseStream: false } ? Name : never]: Definition[Name] extends MethodDefinition<
    infer Req,
    infer Res
  >
    ? (request: Req, options?: ProgressCallOptions) => Promise<Res>
    : never;
};

/** Every unary RPC of every worker service as a call (`upscale`, `generate`, `listModels`, ...). */
export type WorkerClients = UnaryCalls<typeof UpscaleServiceService> &
  UnaryCalls<typeof GenerationServiceService> &
  UnaryCalls<typeof StyleTransferServiceService> &
  UnaryCalls<typeof BackgroundServiceService> &
  UnaryCalls<typeof PromptServiceService> &
  UnaryCalls<typeof CatalogServiceService> & {
    close(): void;
  };

/** The unary RPCs of a service definition, by generated name. */
export function unaryMethods(definition: ServiceDefinition): [string, MethodDefinition<object, object>][] {
  return Object.entries(definition).filter(([, method]) => !method.requestStream && !method.responseStream) as [string, MethodDefinition<object, object>][];
}

/** How long a retry waits for some replica of the service to be ready (a restart in progress). */
export const RETRY_READY_WAIT_MS = 2_000;
/** Reconnection backoff towards a worker that went away: first retry and ceiling, in milliseconds. */
export const RECONNECT_INITIAL_BACKOFF_MS = 100;
export const RECONNECT_MAX_BACKOFF_MS = 500;

export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (error: ServiceError | null, response: Res) => void,
) => { cancel(): void };

/** The error for a call whose signal aborted before it started. */
export function abortedError(signal: AbortSignal): AtelierError {
  // Any signal (not only the facade's, whose reason is already an AtelierError) ends as CANCELLED.
  return signal.reason instanceof AtelierError ? signal.reason : new AtelierError("CANCELLED", "The request was cancelled.", { cause: signal.reason });
}

/** A failed call's error; a CANCELLED the router did not ask for means the worker dropped the call. */
function callFailure(error: ServiceError, signal: AbortSignal | undefined): AtelierError {
  const failure = fromGrpcError(error);
  if (failure.code === "CANCELLED" && !signal?.aborted) {
    return new AtelierError("WORKER_UNAVAILABLE", "The inference worker stopped while handling the request. Try again shortly.", { retryAfterSeconds: 1, cause: error });
  }
  return failure;
}

/** What every attempt of a call carries: the request's trace context and the priority of the work that made the call. */
function callMetadata(): Metadata {
  const metadata = new Metadata();
  const traceparent = outboundTraceparent();
  if (traceparent) metadata.set("traceparent", traceparent);
  setWorkPriority(metadata, currentWorkPriority());
  return metadata;
}

/** One attempt. */
function attemptUnary<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, deadline: Date, signal?: AbortSignal): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError(signal));
    const onAbort = () => call.cancel();
    const call = method(request, callMetadata(), { deadline }, (error, response) => {
      signal?.removeEventListener("abort", onAbort);
      if (!error) return resolve(response);
      reject(callFailure(error, signal));
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A `*Chunked` RPC as its generated client method opens it. */
export type ChunkedMethod<Req, Res> = (metadata: Metadata, options: { deadline: Date }) => ClientDuplexStream<ChunkedRequest<Req>, ChunkedResponse<Res>>;

/**
 * One attempt of a `*Chunked` call (transport/image-chunks.ts): the request goes out with its image in
 * chunks, each written when the stream has room; the answer's image is gathered from its chunks
 * into one buffer as they arrive. Resolves with the same response as the unary twin.
 */
function attemptChunked<Req extends WithImage, Res extends WithImage>(
  method: ChunkedMethod<Req, Res>,
  request: Req,
  deadline: Date,
  maxImageBytes: number,
  signal?: AbortSignal,
  onProgress?: StepListener,
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError(signal));
    const call = method(callMetadata(), { deadline });
    const assembly = new ImageAssembly(maxImageBytes);
    let head: Res | undefined;
    const settled = new AbortController();
    const settle = (outcome: () => void) => {
      if (settled.signal.aborted) return;
      settled.abort();
      signal?.removeEventListener("abort", onAbort);
      outcome();
    };
    const onAbort = () => call.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    call.on("data", (message: ChunkedResponse<Res>) => {
      try {
        if (message.response !== undefined) {
          if (head !== undefined) throw new AtelierError("INTERNAL", "The worker answered twice.");
          head = message.response;
        } else if (head === undefined) {
          if (message.imageChunk !== undefined) throw new AtelierError("INTERNAL", "The worker sent image bytes before its response.");
          onProgress?.(message.step, message.totalSteps, message.stage);
        }
        if (head !== undefined) assembly.add(message.imageChunk);
      } catch (error) {
        call.cancel();
        settle(() => reject(error instanceof AtelierError && error.code === "INTERNAL" ? error : new AtelierError("INTERNAL", `The worker's answer broke the chunking rules: ${(error as Error).message}`, { cause: error })));
      }
    });
    call.on("error", (error: ServiceError) => settle(() => reject(callFailure(error, signal))));
    call.on("end", () =>
      settle(() => {
        if (head === undefined) return reject(new AtelierError("INTERNAL", "The worker's stream ended without a response."));
        try {
          resolve(withGatheredImage(head, assembly.finish()));
        } catch (error) {
          reject(new AtelierError("INTERNAL", `The worker's answer broke the chunking rules: ${(error as Error).message}`, { cause: error }));
        }
      }),
    );
    const messages = chunkedMessages(request, (head, imageChunk): ChunkedRequest<Req> => ({ request: head, imageChunk }));
    void writeInTurn(call, messages, settled.signal).then((whole) => whole && call.end());
  });
}

/** One message of a `<Rpc>Stream` RPC: progress, or (once, last) the unary RPC's response. */
interface ProgressStreamMessage<Res> {
  step: number;
  totalSteps: number;
  stage: string;
  result?: Res | undefined;
}

/** A `<Rpc>Stream` RPC (its request wraps the unary one's) as its generated client method opens it. */
export type ProgressStreamMethod<Res> = (metadata: Metadata, options: { deadline: Date }) => ClientReadableStream<ProgressStreamMessage<Res>>;

/** One call of a server-streaming progress RPC: progress messages, then one message with the result. */
function attemptProgressStream<Res>(open: ProgressStreamMethod<Res>, deadline: Date, onProgress: StepListener, signal?: AbortSignal): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError(signal));
    const call = open(callMetadata(), { deadline });
    let result: Res | undefined;
    const onAbort = () => call.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    call.on("data", (message: ProgressStreamMessage<Res>) => {
      if (message.result) result = message.result;
      else onProgress(message.step, message.totalSteps, message.stage);
    });
    call.on("error", (error: ServiceError) => {
      signal?.removeEventListener("abort", onAbort);
      reject(callFailure(error, signal));
    });
    call.on("end", () => {
      signal?.removeEventListener("abort", onAbort);
      if (result) resolve(result);
      else reject(new AtelierError("INTERNAL", "The worker's stream ended without a result."));
    });
  });
}

/** Resolves once `client`'s channel has a ready connection, or after `waitMs` (whichever first). */
function readyWithin(client: Client, waitMs: number): Promise<void> {
  return new Promise((resolve) => client.waitForReady(Date.now() + waitMs, () => resolve()));
}

/** `attempt`, retried once when the worker was unreachable or went away mid-call. */
async function withRetry<Res>(client: Client, attempt: (deadline: Date) => Promise<Res>, deadlineMs: number, signal?: AbortSignal): Promise<Res> {
  const deadline = new Date(Date.now() + deadlineMs);
  try {
    return await attempt(deadline);
  } catch (error) {
    const retryable = error instanceof AtelierError && error.code === "WORKER_UNAVAILABLE" && !signal?.aborted;
    if (!retryable || deadline.getTime() - Date.now() <= 0) throw error;
    await readyWithin(client, Math.min(RETRY_READY_WAIT_MS, deadline.getTime() - Date.now()));
    return attempt(deadline);
  }
}

/** The call, retried once when the worker was unreachable or went away mid-call. */
function callUnary<Req, Res>(client: Client, method: UnaryMethod<Req, Res>, request: Req, deadlineMs: number, signal?: AbortSignal): Promise<Res> {
  return withRetry(client, (deadline) => attemptUnary(method, request, deadline, signal), deadlineMs, signal);
}

/**
 * The call over its `*Chunked` RPC, retried as {@link callUnary} is (unless `retry` is false). A worker that does not serve the
 * chunked RPC (UNIMPLEMENTED: an older or another implementation) gets `unary` instead, without progress.
 */
export async function callChunked<Req extends WithImage, Res extends WithImage>(
  client: Client,
  method: ChunkedMethod<Req, Res>,
  unary: UnaryMethod<Req, Res>,
  request: Req,
  options: { deadlineMs: number; maxImageBytes: number; signal?: AbortSignal; onProgress?: StepListener; retry?: boolean },
): Promise<Res> {
  const { deadlineMs, maxImageBytes, signal, onProgress, retry = true } = options;
  const attempt = (deadline: Date) => attemptChunked(method, request, deadline, maxImageBytes, signal, onProgress);
  try {
    return await (retry ? withRetry(client, attempt, deadlineMs, signal) : attempt(new Date(Date.now() + deadlineMs)));
  } catch (error) {
    if (!(error instanceof AtelierError && (error.cause as ServiceError | undefined)?.code === GrpcStatus.UNIMPLEMENTED)) throw error;
    return callUnary(client, unary, request, deadlineMs, signal);
  }
}

export function workerChannelOptions(config: AtelierConfig) {
  return {
    "grpc.max_receive_message_length": config.workers.maxMessageBytes,
    "grpc.max_send_message_length": config.workers.maxMessageBytes,
    ...GRPC_FLOW_CONTROL_OPTION,
    "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    // grpc-js defaults to 1 s growing to 120 s: a worker restarted after an outage of a few seconds
    // would stay unused for several more.
    "grpc.initial_reconnect_backoff_ms": RECONNECT_INITIAL_BACKOFF_MS,
    "grpc.max_reconnect_backoff_ms": RECONNECT_MAX_BACKOFF_MS,
  };
}

type GenericClient = Client & Record<string, (...args: never[]) => unknown>;

/** `name`'s twin in `definition` when it is declared with the expected streaming. */
function twin(definition: ServiceDefinition, name: string, suffix: "Chunked" | "Stream"): string | undefined {
  const method = definition[name + suffix];
  const expected = suffix === "Chunked" ? { requestStream: true, responseStream: true } : { requestStream: false, responseStream: true };
  return method && method.requestStream === expected.requestStream && method.responseStream === expected.responseStream ? name + suffix : undefined;
}

/** The call of the unary RPC `name` of `client`'s service, over its twins where the proto declares them. */
function rpcCall(config: AtelierConfig, client: GenericClient, definition: ServiceDefinition, name: string) {
  const unary = client[name]!.bind(client) as unknown as UnaryMethod<object, object>;
  const chunked = twin(definition, name, "Chunked");
  const stream = twin(definition, name, "Stream");
  return (request: object, options?: ProgressCallOptions): Promise<object> => {
    const deadlineMs = callDeadlineMs(config, options);
    const onProgress = stepListener(options?.onProgress);
    const signal = options?.signal;
    if (chunked) {
      const method = client[chunked]!.bind(client) as unknown as ChunkedMethod<WithImage, WithImage>;
      // A call that reports progress is not retried: its progress would go back to the start.
      const chunkedOptions = { deadlineMs, maxImageBytes: config.workers.maxMessageBytes, signal, onProgress, retry: onProgress === undefined };
      return callChunked(client, method, unary as UnaryMethod<WithImage, WithImage>, request as WithImage, chunkedOptions);
    }
    if (stream && onProgress) {
      const open = client[stream]!.bind(client) as unknown as (request: object, metadata: Metadata, options: { deadline: Date }) => ClientReadableStream<ProgressStreamMessage<object>>;
      return attemptProgressStream((metadata, callOptions) => open({ request }, metadata, callOptions), new Date(Date.now() + deadlineMs), onProgress, signal);
    }
    return callUnary(client, unary, request, deadlineMs, signal);
  };
}

/**
 * Clients for every worker service; `addresses` must name every service. The channels of `connectNow`
 * (all by default) connect at once; the others on their first call.
 */
export function createWorkerClients(
  config: AtelierConfig,
  addresses: Record<WorkerServiceName, string>,
  connectNow: ReadonlySet<WorkerServiceName> = new Set(WORKER_SERVICES),
): WorkerClients {
  const options = workerChannelOptions(config);
  const insecure = credentials.createInsecure();
  const clients: Client[] = [];
  const calls: Record<string, unknown> = {};
  for (const [service, definition] of Object.entries(WORKER_SERVICE_DEFINITIONS) as [WorkerServiceName, ServiceDefinition][]) {
    // Images are written and read without extra copies (transport/image-message-codec.ts).
    const Constructor = makeGenericClientConstructor(withImageCodecs(definition), service);
    const client = new Constructor(addresses[service], insecure, options) as GenericClient;
    // Connect now rather than on the first call: round_robin picks only ready replicas, so a channel
    // that connects on its first call hands that whole first burst to whichever replica answers first.
    if (connectNow.has(service)) client.getChannel().getConnectivityState(true);
    clients.push(client);
    for (const [name] of unaryMethods(definition)) calls[name] = rpcCall(config, client, definition, name);
  }
  return { ...calls, close: () => clients.forEach((client) => client.close()) } as WorkerClients;
}
