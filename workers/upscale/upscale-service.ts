/** gRPC UpscaleService: validates the request, picks a model, runs it in the work queue. */
import {
  UpscaleServiceService,
  type UpscaleRequest,
  type UpscaleResponse,
} from "../../gen/atelier/upscale/v1/upscale_service.js";
import { AtelierError } from "../../core/errors.js";
import { unaryHandler } from "../grpc-handler.js";
import { encodeImage } from "../image/encode-image.js";
import { assertOutputSize, openImage } from "../image/open-image.js";
import type { WorkerContext } from "../worker-context.js";
import { UPSCALE_SCALES } from "../catalog/model-catalog.js";
import { lanczosUpscale } from "./lanczos-upscaler.js";

export type UpscaleDependencies = Pick<WorkerContext, "limits" | "queue" | "logger">;

const MIN_SCALE = UPSCALE_SCALES[0];
const MAX_SCALE = UPSCALE_SCALES[UPSCALE_SCALES.length - 1]!;
const UPSCALE_MODELS = ["lanczos"];

export async function upscale(request: UpscaleRequest, deps: UpscaleDependencies, signal: AbortSignal): Promise<UpscaleResponse> {
  const { scale } = request;
  if (!Number.isInteger(scale) || scale < MIN_SCALE || scale > MAX_SCALE) {
    throw new AtelierError("INVALID_INPUT", `Expected integer between ${MIN_SCALE} and ${MAX_SCALE} for scale but received ${scale}.`, {
      issues: [{ path: "scale", message: `Expected integer between ${MIN_SCALE} and ${MAX_SCALE} but received ${scale}.` }],
    });
  }
  const model = request.model === "" ? "lanczos" : request.model;
  if (!UPSCALE_MODELS.includes(model)) {
    throw new AtelierError("INVALID_INPUT", `Unknown upscale model "${model}". Available: ${UPSCALE_MODELS.join(", ")}.`, {
      issues: [{ path: "model", message: `Expected one of ${UPSCALE_MODELS.join(", ")}.` }],
    });
  }
  if (!request.image || request.image.data.byteLength === 0) {
    throw new AtelierError("INVALID_INPUT", "The request carries no image bytes.", { issues: [{ path: "image", message: "Required." }] });
  }
  const opened = await openImage(request.image.data, deps.limits);
  const width = opened.info.width * scale;
  const height = opened.info.height * scale;
  assertOutputSize(width, height, deps.limits, "Use a smaller scale or a smaller image.");
  const image = await deps.queue.run(() => encodeImage(lanczosUpscale(opened, scale), request.outputFormat), signal);
  return { image, model, scale, nativeScale: scale, steps: [`lanczos3 x${scale}`] };
}

export function upscaleServiceImplementation(deps: UpscaleDependencies) {
  return {
    definition: UpscaleServiceService,
    implementation: {
      upscale: unaryHandler<UpscaleRequest, UpscaleResponse>(deps.logger, "Upscale", (request, signal) => upscale(request, deps, signal)),
    },
  };
}
