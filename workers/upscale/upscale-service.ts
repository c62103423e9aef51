/**
 * gRPC UpscaleService: validates the request, picks the model and its path to the factor
 * (models/requests/upscale-choice.ts), refuses an output over the pixel limit before any work, then runs the
 * upscale and the encoding inside the worker's queue.
 *
 * Order of refusals: scale out of range, no image, unknown quality or quality beside a model, unknown
 * model or a factor it cannot produce (400), model not installed (503), undecodable or oversized input
 * (422, 413), oversized output (413), `quality: "max"` predicted past the deadline (400).
 */
import {
  UpscaleServiceService,
  type UpscaleRequest,
  type UpscaleResponse,
} from "../../gen/atelier/upscale/v1/upscale_service.js";
import { loadConfig } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { unaryHandler } from "../grpc-handler.js";
import { encodeImage } from "../image/encode-image.js";
import { openImage, type OpenedImage } from "../../core/open-image.js";
import { readRawImage, type RawImage } from "../image/raw-image.js";
import type { WorkerContext } from "../worker-context.js";
import { lanczosUpscale } from "./lanczos-upscaler.js";
import { upscaleWithNetwork, type NetworkUpscale } from "./network-pipeline.js";
import type { NetworkDependencies } from "./network-upscaler.js";
import { modelEnsemble } from "./model-ensemble.js";
import { chooseByQuality, isClassical, sourceStorage, upscalePath, type UpscaleChoice } from "../../models/requests/upscale-choice.js";
import { assertScale, assertUpscaleFits, checkUpscaleOptions } from "../../models/requests/upscale-request.js";

export type UpscaleDependencies = Pick<WorkerContext, "limits" | "queue" | "logger" | "runtime" | "models"> & Partial<Pick<WorkerContext, "config">>;

/** Upscales `source` with the chosen model along its path, averaged with the choice's second network if any. */
export async function upscaleByChoice(
  source: RawImage,
  choice: UpscaleChoice,
  scale: number,
  deps: NetworkDependencies,
  options: { grey: boolean; signal?: AbortSignal },
): Promise<NetworkUpscale> {
  const { entry, selfEnsemble, averagedWith } = choice;
  const { grey, signal } = options;
  const path = upscalePath(entry, scale)!;
  let { image, steps } = isClassical(entry)
    ? { image: await lanczosUpscale(source, scale, { grey, signal }), steps: [`lanczos3 x${scale}`] }
    : await upscaleWithNetwork(source, entry, scale, path, deps, { grey, signal, selfEnsemble });
  if (averagedWith) {
    const other = await upscaleWithNetwork(source, averagedWith.entry, scale, averagedWith.path, deps, {
      grey,
      signal,
      selfEnsemble: averagedWith.selfEnsemble,
    });
    image = modelEnsemble([image, other.image]);
    steps = [...steps, ...other.steps, "mean of both"];
  }
  return { image, steps };
}

/** Runs the chosen model along its path; returns the upscaled pixels (grey stays grey) and the steps taken. */
async function render(
  opened: OpenedImage,
  choice: UpscaleChoice,
  scale: number,
  deps: UpscaleDependencies,
  signal: AbortSignal,
): Promise<NetworkUpscale> {
  const source = await readRawImage(opened.pipeline());
  const grey = opened.info.colorChannels === 1;
  return upscaleByChoice(source, choice, scale, deps, { grey, signal });
}

export async function upscale(request: UpscaleRequest, deps: UpscaleDependencies, signal: AbortSignal): Promise<UpscaleResponse> {
  const { scale } = request;
  assertScale(scale);
  if (!request.image || request.image.data.byteLength === 0) {
    throw new AtelierError("INVALID_INPUT", "The request carries no image bytes.", { issues: [{ path: "image", message: "Required." }] });
  }
  const { quality, requested } = checkUpscaleOptions(request);
  if (requested) deps.models.assertUsable(requested);

  const opened = await openImage(request.image.data, deps.limits);
  assertUpscaleFits(opened.info.width, opened.info.height, scale, deps.limits);
  const choice: UpscaleChoice = requested
    ? { entry: requested, selfEnsemble: false }
    : chooseByQuality(quality ?? "balanced", scale, opened.info, sourceStorage(opened.info.format), deps.models, {
        // Without a configuration (hand-built dependencies) no budget: the fast default.
        timeBudgetMs: deps.config?.images.upscaleTimeBudgetMs ?? 0,
        workers: (deps.config ?? loadConfig({})).workers,
      });
  const { entry } = choice;
  const path = upscalePath(entry, scale)!;

  const started = performance.now();
  const { image, steps } = await deps.queue.run(async () => {
    const { image, steps } = await render(opened, choice, scale, deps, signal);
    return { image: await encodeImage(image, request.outputFormat), steps };
  }, signal);
  deps.logger.debug({ model: entry.id, scale, nativeScale: path.nativeScale, steps, ms: Math.round(performance.now() - started) }, "upscaled");
  return { image, model: entry.id, scale, nativeScale: path.nativeScale, steps };
}

export function upscaleServiceImplementation(deps: UpscaleDependencies) {
  return {
    definition: UpscaleServiceService,
    implementation: {
      upscale: unaryHandler<UpscaleRequest, UpscaleResponse>(deps.logger, "Upscale", (request, signal) => upscale(request, deps, signal)),
    },
  };
}
