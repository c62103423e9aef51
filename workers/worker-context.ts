/** What every worker service is built from: limits, the inference queue, the model runtime and loader. */
import type { AtelierConfig } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import type { ImageLimits } from "../core/image-limits.js";
import type { ModelLoader } from "./model-loader.js";
import type { ModelRuntime } from "./onnx/onnx-runtime.js";
import type { WorkQueue } from "./work-queue.js";

export interface WorkerContext {
  config: AtelierConfig;
  limits: ImageLimits;
  /** Bounds concurrent inference jobs across all services of this worker. */
  queue: WorkQueue;
  logger: Logger;
  runtime: ModelRuntime;
  models: ModelLoader;
}
