/**
 * Typed, promise-returning calls to the workers, each with the configured deadline, cancelled
 * when the HTTP client goes away, and with gRPC failures turned back into AtelierErrors.
 *
 * An address may name several replicas (`ipv4:10.0.0.5:50051,10.0.0.6:50051`, or a `dns:///`
 * name with several records); calls are spread over them round-robin.
 */
import { credentials, Metadata, type Client, type ServiceError } from "@grpc/grpc-js";
import type { AtelierConfig, WorkerServiceName } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { fromGrpcError } from "../../core/grpc-errors.js";
import { outboundTraceparent } from "../../observability/trace-context.js";
import { BackgroundServiceClient, type RemoveBackgroundRequest, type RemoveBackgroundResponse } from "../../gen/atelier/background/v1/background_service.js";
import { CatalogServiceClient, type ListModelsRequest, type ListModelsResponse } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { GenerationServiceClient, type GenerateRequest, type GenerateResponse } from "../../gen/atelier/generation/v1/generation_service.js";
import { PromptServiceClient, type ImprovePromptRequest, type ImprovePromptResponse } from "../../gen/atelier/prompt/v1/prompt_service.js";
import { StyleTransferServiceClient, type StyleTransferRequest, type StyleTransferResponse } from "../../gen/atelier/style/v1/style_transfer_service.js";
import { UpscaleServiceClient, type UpscaleRequest, type UpscaleResponse } from "../../gen/atelier/upscale/v1/upscale_service.js";

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

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (error: ServiceError | null, response: Res) => void,
) => { cancel(): void };

function callUnary<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, deadlineMs: number, signal?: AbortSignal): Promise<Res> {
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
    const call = method(request, metadata, { deadline: new Date(Date.now() + deadlineMs) }, (error, response) => {
      signal?.removeEventListener("abort", onAbort);
      if (error) reject(fromGrpcError(error));
      else resolve(response);
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function workerChannelOptions(config: AtelierConfig) {
  return {
    "grpc.max_receive_message_length": config.workers.maxMessageBytes,
    "grpc.max_send_message_length": config.workers.maxMessageBytes,
    "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  };
}

/** Clients for every worker service; `addresses` must name every service. */
export function createWorkerClients(config: AtelierConfig, addresses: Record<WorkerServiceName, string>): WorkerClients {
  const options = workerChannelOptions(config);
  const insecure = credentials.createInsecure();
  const upscale = new UpscaleServiceClient(addresses.upscale, insecure, options);
  const generation = new GenerationServiceClient(addresses.generation, insecure, options);
  const style = new StyleTransferServiceClient(addresses.style, insecure, options);
  const background = new BackgroundServiceClient(addresses.background, insecure, options);
  const prompt = new PromptServiceClient(addresses.prompt, insecure, options);
  const catalog = new CatalogServiceClient(addresses.catalog, insecure, options);
  const all: Client[] = [upscale, generation, style, background, prompt, catalog];
  const deadline = (callOptions?: CallOptions) => callOptions?.deadlineMs ?? config.workers.deadlineMs;
  const bind = <Req, Res>(client: Client, method: UnaryMethod<Req, Res>) => method.bind(client) as UnaryMethod<Req, Res>;
  return {
    upscale: (request, o) => callUnary(bind(upscale, upscale.upscale), request, deadline(o), o?.signal),
    generate: (request, o) => callUnary(bind(generation, generation.generate), request, deadline(o), o?.signal),
    styleTransfer: (request, o) => callUnary(bind(style, style.styleTransfer), request, deadline(o), o?.signal),
    removeBackground: (request, o) => callUnary(bind(background, background.removeBackground), request, deadline(o), o?.signal),
    improvePrompt: (request, o) => callUnary(bind(prompt, prompt.improvePrompt), request, deadline(o), o?.signal),
    listModels: (request, o) => callUnary(bind(catalog, catalog.listModels), request, deadline(o), o?.signal),
    close: () => all.forEach((client) => client.close()),
  };
}
