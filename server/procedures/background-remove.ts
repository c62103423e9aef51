import { AtelierError } from "../../core/errors.js";
import { parseReplacement, photographicGenerator, resolveReplacement, type Replacement } from "../background/index.js";
import { namedModel } from "../../models/requests/background-model-choice.js";
import { assertOutputSize, SMALLER_IMAGE_HINT } from "../../core/image-limits.js";
import type { RequestContext } from "../context.js";
import { inlineImageSize } from "./inline-image.js";
import { envelope, loadSourceImage, toImageResult, toProtoFormat } from "./image-io.js";
import type { OperationInput, OperationOutput } from "../../contract/operations.js";

export type BackgroundRemoveInput = OperationInput<"tools.backgroundRemove">;

/** What `replacement` means; 400 for one beside `onlyMask`. */
function checkedReplacement(input: BackgroundRemoveInput): Replacement {
  const replacement = parseReplacement(input.replacement);
  if (input.onlyMask && replacement.kind !== "none") {
    const message = "Expected no replacement with onlyMask, which returns the matte alone";
    throw new AtelierError("INVALID_INPUT", message, { issues: [{ path: "onlyMask", message }] });
  }
  return replacement;
}

/**
 * The checks the call makes before any work, in its order, so a job is refused with the
 * synchronous call's error before it is accepted: the replacement and its options, a described
 * scene with no photographic generator installed, a model the catalog does not know, and for an
 * image sent as a data URL, the image itself (format, bytes, pixels) and the result's size. Whether
 * a named model is installed, and images behind http(s) URLs, are the job's to find out.
 */
export async function precheckBackgroundRemove(input: BackgroundRemoveInput, ctx: RequestContext): Promise<void> {
  const replacement = checkedReplacement(input);
  if (replacement.kind === "generate") await photographicGenerator(ctx);
  if (input.model !== undefined) namedModel(input.model);
  const size = await inlineImageSize(ctx, input.imageUrl);
  if (size) assertOutputSize(size.width, size.height, ctx.services.config.images, SMALLER_IMAGE_HINT);
}

export async function removeBackground(input: OperationInput<"tools.backgroundRemove">, ctx: RequestContext): Promise<OperationOutput<"tools.backgroundRemove">> {
  const replacement = checkedReplacement(input);
  // A description needs a photographic generator: refuse before fetching anything if there is none.
  const generator = replacement.kind === "generate" ? await photographicGenerator(ctx) : undefined;
  const source = loadSourceImage(ctx, input.imageUrl);
  const [image, resolved] = await Promise.all([source, resolveReplacement(ctx, replacement, source, generator)]);
  const result = await ctx.services.workers.removeBackground(
    { image, model: input.model ?? "", replacement: resolved.field, onlyMask: input.onlyMask, outputFormat: toProtoFormat(input.outputFormat) },
    { signal: ctx.signal },
  );
  return {
    ...envelope(ctx, result.model),
    data: [await toImageResult(ctx, result.image)],
    replacement: resolved.understood,
    ...(result.note ? { note: result.note } : {}),
  };
}
