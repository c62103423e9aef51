/**
 * The checks of an UpscaleRequest that need neither the installed models nor a decoded image, and
 * the check of the result's size from the source's size alone. The worker makes them before any
 * work; the router makes the same ones before it accepts an upscale as a job
 * (server/procedures/upscale.ts), so both answer with the same error.
 */
import { AtelierError } from "../../core/errors.js";
import { LIMITS } from "../../core/limits.js";
import type { UpscaleQuality as QualityName } from "../../core/upscale-quality.js";
import { UpscaleQuality, type UpscaleRequest } from "../../gen/atelier/upscale/v1/upscale_service.js";
import type { CatalogEntry } from "../catalog/catalog-types.js";
import { assertOutputSize, type ImageLimits } from "../../core/image-limits.js";
import { requestedModel } from "./upscale-choice.js";

const { min: MIN_SCALE, max: MAX_SCALE } = LIMITS.upscaleScale;

export function assertScale(scale: number): void {
  if (!Number.isInteger(scale) || scale < MIN_SCALE || scale > MAX_SCALE) {
    throw new AtelierError("INVALID_INPUT", `Expected integer between ${MIN_SCALE} and ${MAX_SCALE} for scale but received ${scale}.`, {
      issues: [{ path: "scale", message: `Expected integer between ${MIN_SCALE} and ${MAX_SCALE} but received ${scale}.` }],
    });
  }
}

const QUALITY_NAMES: Readonly<Record<UpscaleQuality, QualityName | undefined>> = {
  [UpscaleQuality.UPSCALE_QUALITY_UNSPECIFIED]: undefined,
  [UpscaleQuality.UPSCALE_QUALITY_FAST]: "fast",
  [UpscaleQuality.UPSCALE_QUALITY_BALANCED]: "balanced",
  [UpscaleQuality.UPSCALE_QUALITY_MAX]: "max",
  [UpscaleQuality.UNRECOGNIZED]: undefined,
};

/** The requested quality's name, undefined when unset; INVALID_INPUT for an unknown value or one set beside `model`. */
function requestedQuality(request: Pick<UpscaleRequest, "quality" | "model">): QualityName | undefined {
  const name = QUALITY_NAMES[request.quality];
  if (name === undefined && request.quality !== UpscaleQuality.UPSCALE_QUALITY_UNSPECIFIED) {
    const message = `Expected one of fast, balanced, max for quality but received ${request.quality}.`;
    throw new AtelierError("INVALID_INPUT", message, { issues: [{ path: "quality", message }] });
  }
  if (name !== undefined && request.model !== "") {
    const message = `quality chooses the model, so it cannot be set together with model ("${request.model}"); send one of them.`;
    throw new AtelierError("INVALID_INPUT", message, { issues: [{ path: "quality", message }] });
  }
  return name;
}

/**
 * The quality and the named model (a catalog upscaler that reaches the scale), checked in that
 * order; whether the model is installed is the worker's to say.
 */
export function checkUpscaleOptions(request: Pick<UpscaleRequest, "quality" | "model" | "scale">): { quality: QualityName | undefined; requested: CatalogEntry | undefined } {
  const quality = requestedQuality(request);
  const requested = request.model === "" ? undefined : requestedModel(request.model, request.scale);
  return { quality, requested };
}

/** The largest scale whose result from a `width`x`height` source fits the output limit; undefined when none does. */
export function largestFittingScale(width: number, height: number, limits: ImageLimits): number | undefined {
  for (let scale = MAX_SCALE; scale >= MIN_SCALE; scale--) {
    if (width * scale * (height * scale) <= limits.maxOutputPixels) return scale;
  }
  return undefined;
}

/** OUTPUT_TOO_LARGE when `scale` takes the source over the output limit, naming the largest scale that fits. */
export function assertUpscaleFits(width: number, height: number, scale: number, limits: ImageLimits): void {
  const fitting = largestFittingScale(width, height, limits);
  const hint =
    fitting === undefined
      ? `No scale fits this ${width}x${height} image (the smallest is ${MIN_SCALE}); use a smaller image.`
      : `Use a smaller scale or a smaller image: the largest scale that fits this ${width}x${height} image is ${fitting}.`;
  assertOutputSize(width * scale, height * scale, limits, hint);
}
