import { envelope, loadSourceImage, toImageResult, toProtoFormat } from "./image-io.js";
import { ModelTask } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { styleEntry, unknownStyleError } from "../../models/requests/style-request.js";
import { assertOutputSize, SMALLER_IMAGE_HINT } from "../../core/image-limits.js";
import type { RequestContext } from "../context.js";
import { inlineImageSize } from "./inline-image.js";
import { catalogSpeaksFor, usableWorkerModels } from "./workers-catalog.js";
import type { OperationInput, OperationOutput } from "../../contract/operations.js";

export type StyleTransferInput = OperationInput<"tools.styleTransfer">;

/**
 * The worker's checks that need no work (models/requests/style-request.ts, style-service.ts), so a job
 * is refused with the synchronous call's error before it is accepted: a style the catalog does not
 * know, and for an image sent as a data URL, the image itself (format, bytes, pixels) and the
 * result's size. Whether a known style is installed is the job's to find out.
 */
export async function precheckStyleTransfer(input: StyleTransferInput, ctx: RequestContext): Promise<void> {
  if (!styleEntry(input.style)) {
    if (!catalogSpeaksFor(ctx, "style")) return;
    // The refusal names the styles usable here, which only the workers' catalog knows.
    throw unknownStyleError(input.style, await usableWorkerModels(ctx, ModelTask.MODEL_TASK_STYLE_TRANSFER));
  }
  const size = await inlineImageSize(ctx, input.imageUrl);
  if (size) assertOutputSize(size.width, size.height, ctx.services.config.images, SMALLER_IMAGE_HINT);
}

export async function styleTransfer(input: OperationInput<"tools.styleTransfer">, ctx: RequestContext): Promise<OperationOutput<"tools.styleTransfer">> {
  const image = await loadSourceImage(ctx, input.imageUrl);
  const result = await ctx.services.workers.styleTransfer(
    {
      image,
      style: input.style,
      strength: input.strength,
      preserveColors: input.preserveColors,
      outputFormat: toProtoFormat(input.outputFormat),
    },
    { signal: ctx.signal },
  );
  return { ...envelope(ctx, result.model), data: [await toImageResult(ctx, result.image)], style: result.style };
}
