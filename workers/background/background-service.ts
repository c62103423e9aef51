/**
 * gRPC BackgroundService: validates the request, picks the segmentation model (or, with none named,
 * how the picture will pick it), checks the image against the limits, then runs the choice and the
 * whole removal (network and full-resolution steps) as one job of the worker's queue.
 */
import { AtelierError } from "../../core/errors.js";
import {
  BackgroundServiceService,
  type RemoveBackgroundRequest,
  type RemoveBackgroundResponse,
} from "../../gen/atelier/background/v1/background_service.js";
import { unaryHandler } from "../grpc-handler.js";
import { assertOutputSize, SMALLER_IMAGE_HINT } from "../../core/image-limits.js";
import { openImage } from "../../core/open-image.js";
import type { WorkerContext } from "../worker-context.js";
import { modelChoice } from "../../models/requests/background-model-choice.js";
import { chooseForImage } from "./choose-per-image.js";
import { runRemoval, type FillRequest } from "./remove-background.js";
import { LIMITS } from "../../core/limits.js";

export type BackgroundDependencies = Pick<WorkerContext, "limits" | "queue" | "logger" | "runtime" | "models">;

/** Largest blur sigma accepted, in source pixels. */
export const MAX_BLUR_SIGMA = LIMITS.blurSigma.max;

function invalid(path: string, message: string): AtelierError {
  return new AtelierError("INVALID_INPUT", `${message}.`, { issues: [{ path, message }] });
}

function channel(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 255) throw invalid(`color.${name}`, `Expected integer between 0 and 255 for color.${name} but received ${value}`);
  return value;
}

/** The request's replacement as a fill request, each value checked. */
export function fillOf(request: RemoveBackgroundRequest): FillRequest {
  const replacement = request.replacement;
  switch (replacement?.$case) {
    case undefined:
      return { kind: "transparent" };
    case "color": {
      const { red, green, blue, alpha } = replacement.value;
      if (!(alpha >= 0 && alpha <= 1)) throw invalid("color.alpha", `Expected number between 0 and 1 for color.alpha but received ${alpha}`);
      return { kind: "color", red: channel(red, "red"), green: channel(green, "green"), blue: channel(blue, "blue"), alpha };
    }
    case "imageBackground":
      if (replacement.value.data.byteLength === 0) throw invalid("image_background", "Expected image bytes for image_background but received none");
      return { kind: "image", bytes: replacement.value.data };
    case "blur": {
      const { sigma } = replacement.value;
      if (!(sigma === 0 || (sigma >= LIMITS.blurSigma.min && sigma <= MAX_BLUR_SIGMA))) {
        throw invalid("blur.sigma", `Expected 0 or a number between ${LIMITS.blurSigma.min} and ${MAX_BLUR_SIGMA} for blur.sigma but received ${sigma}`);
      }
      return { kind: "blur", sigma };
    }
  }
}

export async function removeBackground(request: RemoveBackgroundRequest, deps: BackgroundDependencies, signal: AbortSignal): Promise<RemoveBackgroundResponse> {
  if (!request.image || request.image.data.byteLength === 0) {
    throw new AtelierError("INVALID_INPUT", "The request carries no image bytes.", { issues: [{ path: "image", message: "Required." }] });
  }
  const fill = fillOf(request);
  if (request.onlyMask && fill.kind !== "transparent") {
    throw invalid("only_mask", "Expected no replacement with only_mask, which returns the matte alone");
  }
  const choice = modelChoice(request.model, deps.models);
  const source = await openImage(request.image.data, deps.limits);
  assertOutputSize(source.info.width, source.info.height, deps.limits, SMALLER_IMAGE_HINT);
  const { image, timings, model, evidence } = await deps.queue.run(async () => {
    const chosen = "model" in choice ? { model: choice.model, evidence: undefined } : await chooseForImage(choice.perImage, source, deps, signal);
    const removal = await runRemoval({ source, model: chosen.model, fill, onlyMask: request.onlyMask, outputFormat: request.outputFormat }, deps, signal);
    return { ...removal, ...chosen };
  }, signal);
  deps.logger.debug({ model: model.entry.id, person: evidence, width: source.info.width, height: source.info.height, fill: fill.kind, timings }, "background removed");
  return { image, model: model.entry.id, note: model.note ?? "" };
}

export function backgroundServiceImplementation(deps: BackgroundDependencies) {
  return {
    definition: BackgroundServiceService,
    implementation: {
      removeBackground: unaryHandler<RemoveBackgroundRequest, RemoveBackgroundResponse>(deps.logger, "RemoveBackground", (request, signal) =>
        removeBackground(request, deps, signal),
      ),
    },
  };
}
