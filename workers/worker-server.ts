/**
 * One gRPC server hosting the worker services, with the standard health service, message limits
 * sized for images, and a graceful shutdown that lets running calls finish.
 */
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type { AtelierConfig } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { withImageCodecs } from "../transport/image-message-codec.js";
import { GRPC_FLOW_CONTROL_OPTION, widenServerReceiveWindows } from "../transport/grpc-flow-control.js";
import { catalogServiceImplementation, type ModelInventory } from "./catalog-service.js";
import { CLIP_MERGES_FILE } from "../models/catalog/entries/clip-merges.js";
import { catalogEntry, MODEL_CATALOG } from "../models/catalog/model-catalog.js";
import { STARTER_MODELS } from "../models/catalog/starter-models.js";
import { arrivingModel } from "../models/store/arriving-models.js";
import { promptServiceImplementation, type PromptServiceOptions } from "./prompt/prompt-service.js";
import { upscaleServiceImplementation } from "./upscale/upscale-service.js";
import { createGenerationService, generationServiceImplementation } from "./generation/generation-service.js";
import { backgroundServiceImplementation } from "./background/background-service.js";
import { styleTransferServiceImplementation } from "./style/style-service.js";
import { ModelLoader } from "./model-loader.js";
import { ModelStore } from "../models/store/model-store.js";
import { ModelRuntime } from "./onnx/onnx-runtime.js";
import type { WorkerContext } from "./worker-context.js";
import { WarmUp } from "./warm-up.js";
import { chunkedImageHandler } from "./chunked-image-handler.js";
import type { WithImage } from "../transport/image-chunks.js";
import { workOf, type ServiceBinding } from "./grpc-handler.js";
import { WorkQueue } from "./work-queue.js";
import { methodOf } from "./call-record.js";
import { dropKeptMemory } from "./idle-memory.js";
import { LocalCalls } from "./local-calls.js";
import { inCallersPriority } from "./call-priority.js";
import type { LocalWorker } from "../transport/local-worker.js";
import { setServiceHeapGrowth } from "../core/heap-growth.js";

export interface RunningWorker {
  /** `host:port` the server listens on. */
  address: string;
  port: number;
  server: Server;
  /** The same services for the router in this process, without gRPC (transport/local-worker.ts). */
  local: LocalWorker;
  /** Warms the default models; started by whoever starts the service once it serves (ATELIER_WARM_UP). */
  warmUp: WarmUp;
  /** Stops accepting calls, waits up to `graceMs` for running ones (RPCs and local calls), then forces. */
  shutdown(graceMs?: number): Promise<void>;
}

function grpcChannelOptions(config: AtelierConfig) {
  return {
    "grpc.max_receive_message_length": config.workers.maxMessageBytes,
    "grpc.max_send_message_length": config.workers.maxMessageBytes,
    ...GRPC_FLOW_CONTROL_OPTION,
  };
}

/** The shared parts every service of one worker process uses. */
export function createWorkerContext(config: AtelierConfig, logger: Logger): WorkerContext {
  return {
    config,
    limits: config.images,
    logger,
    queue: new WorkQueue({ concurrency: config.workers.concurrency, queueLength: config.workers.queueLength }),
    runtime: new ModelRuntime({
      threads: config.inference.threads,
      spinning: config.inference.spinning,
      memoryBudgetBytes: config.inference.memoryBudgetBytes,
      idleReleaseMs: config.inference.idleReleaseMs,
      onIdleRelease: dropKeptMemory,
      logger,
    }),
    models: new ModelLoader(new ModelStore(config.modelsDir), { disableNonCommercial: config.inference.disableNonCommercial }),
  };
}

/**
 * The prompt engine reads the installed term lists and CLIP merges when `prompt-builtin` is pulled
 * (read again until it is). They are arriving while first-start provisioning installs them, and,
 * when `starting` (the worker starts before its process begins provisioning), when provisioning is
 * on and will fetch them.
 */
function promptOptions(context: WorkerContext, starting: boolean): PromptServiceOptions {
  const entry = catalogEntry("prompt-builtin");
  if (!entry) throw new Error("The catalog has no prompt-builtin entry.");
  const { store } = context.models;
  const installed = store.isInstalled(entry);
  const provisioned = starting && context.config.provisionModels && (STARTER_MODELS as readonly string[]).includes(entry.id);
  return {
    modifiersFolder: installed ? store.modelFolder(entry.id) : undefined,
    clipMergesFile: installed ? store.filePath(entry, CLIP_MERGES_FILE.name) : undefined,
    listsArriving: !installed && (provisioned || arrivingModel(store.modelsDir, entry.id) !== undefined),
    maxTokens: context.config.prompt.maxTokens,
    llm: context.config.prompt.llm,
  };
}

/** Suffix of the RPC that serves its unary twin's work with the image in chunks. */
const CHUNKED = "Chunked";

/**
 * `binding` with each `<method>Chunked` RPC of its definition served by its unary twin's work
 * (workers/chunked-image-handler.ts), unless the service implements it itself.
 */
export function withChunkedTwins({ definition, implementation }: ServiceBinding, logger: Logger, maxImageBytes: number): ServiceBinding {
  const twins = Object.entries(definition).flatMap(([name, method]) => {
    if (!name.endsWith(CHUNKED) || !method.requestStream || !method.responseStream || implementation[name]) return [];
    const twin = name.slice(0, -CHUNKED.length);
    const work = workOf(implementation[twin]);
    // Counted under the twin's name (atelier_worker_calls_total{method}): the same operation.
    const unary = definition[twin];
    const rpc = unary ? methodOf(unary.path) : name;
    return work ? [[name, chunkedImageHandler(logger, rpc, work as (request: WithImage, signal: AbortSignal) => Promise<WithImage>, maxImageBytes)]] : [];
  });
  return { definition, implementation: { ...implementation, ...Object.fromEntries(twins) } };
}

function workerServiceBindings(context: WorkerContext): ServiceBinding[] {
  const { models, logger } = context;
  const inventory: ModelInventory = {
    entries: () => MODEL_CATALOG,
    isInstalled: (entry) => models.store.isInstalled(entry),
    isDisabled: (entry) => models.isDisabled(entry),
    installCommand: (entry) => models.store.installCommand(entry),
  };
  return ([
    upscaleServiceImplementation(context),
    generationServiceImplementation(context),
    backgroundServiceImplementation(context),
    styleTransferServiceImplementation(context),
    promptServiceImplementation({ logger, options: (starting) => promptOptions(context, starting) }),
    catalogServiceImplementation(inventory, logger),
  ] as ServiceBinding[]).map((binding) => withChunkedTwins(binding, logger, context.config.workers.maxMessageBytes));
}

export async function startWorkerServer(
  config: AtelierConfig,
  logger: Logger,
  listen: { host: string; port: number } = { host: config.workers.listenHost, port: config.workers.listenPort },
  context: WorkerContext = createWorkerContext(config, logger),
): Promise<RunningWorker> {
  setServiceHeapGrowth();
  const server = new Server(grpcChannelOptions(config));
  const bindings = workerServiceBindings(context);
  const local = new LocalCalls(bindings, logger);
  const health = new HealthImplementation({ "": "SERVING" });
  for (const { definition, implementation } of bindings) {
    server.addService(withImageCodecs(definition), inCallersPriority(implementation));
    const first = Object.values(definition)[0];
    const serviceName = first?.path.split("/")[1];
    if (serviceName) health.setStatus(serviceName, "SERVING");
  }
  health.addToServer(server);
  const hostForBind = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${hostForBind}:${listen.port}`, ServerCredentials.createInsecure(), (error, boundPort) =>
      error ? reject(error) : resolve(boundPort),
    ),
  );
  widenServerReceiveWindows(server, logger);
  logger.info({ address: `${hostForBind}:${port}` }, "worker listening");
  const warmUp = new WarmUp(context, createGenerationService(context), bindings);
  return {
    address: `${hostForBind}:${port}`,
    port,
    server,
    local,
    warmUp,
    shutdown: async (graceMs = 10_000) => {
      health.setStatus("", "NOT_SERVING");
      await warmUp.stop();
      const served = new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      await Promise.all([served, local.drain(graceMs)]);
      await context.runtime.dispose();
    },
  };
}
