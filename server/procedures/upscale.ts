import { UpscaleQuality, type UpscaleRequest } from "../../gen/atelier/upscale/v1/upscale_service.js";
import { assertUpscaleFits, checkUpscaleOptions } from "../../models/requests/upscale-request.js";
import type { RequestContext } from "../context.js";
import { type UpscaleQuality as QualityName } from "../../core/upscale-quality.js";
import { envelope, loadSourceImage, toImageResult, toProtoFormat } from "./image-io.js";
import { inlineImageSize } from "./inline-image.js";
import type { OperationInput, OperationOutput } from "../../contract/operations.js";

const PROTO_QUALITIES: Readonly<Record<QualityName, UpscaleQuality>> = {
  fast: UpscaleQuality.UPSCALE_QUALITY_FAST,
  balanced: UpscaleQuality.UPSCALE_QUALITY_BALANCED,
  max: UpscaleQuality.UPSCALE_QUALITY_MAX,
};

export type UpscaleInput = OperationInput<"tools.upscale">;

/** The worker request's fields other than the image. */
function upscaleOptions(input: UpscaleInput): Omit<UpscaleRequest, "image"> {
  return {
    scale: input.scale,
    model: input.model ?? "",
    outputFormat: toProtoFormat(input.outputFormat),
    quality: input.quality ? PROTO_QUALITIES[input.quality] : UpscaleQuality.UPSCALE_QUALITY_UNSPECIFIED,
  };
}

/**
 * The worker's checks that need no worker and no download (models/requests/upscale-request.ts), so
 * a job is refused with the synchronous call's error before it is accepted: the quality and model
 * options, and for an image sent as a data URL, the image itself (format, bytes, pixels) and the
 * result's size. Whether a named model is installed, and an image behind an http(s) URL, are
 * known only to the job.
 */
export async function precheckUpscale(input: UpscaleInput, ctx: RequestContext): Promise<void> {
  checkUpscaleOptions(upscaleOptions(input));
  const size = await inlineImageSize(ctx, input.imageUrl);
  if (size) assertUpscaleFits(size.width, size.height, input.scale, ctx.services.config.images);
}

export async function upscale(input: OperationInput<"tools.upscale">, ctx: RequestContext): Promise<OperationOutput<"tools.upscale">> {
  const image = await loadSourceImage(ctx, input.imageUrl);
  const result = await ctx.services.workers.upscale({ ...upscaleOptions(input), image }, { signal: ctx.signal });
  return {
    ...envelope(ctx, result.model),
    data: [await toImageResult(ctx, result.image)],
    scale: result.scale,
    nativeScale: result.nativeScale,
    steps: result.steps,
  };
}
