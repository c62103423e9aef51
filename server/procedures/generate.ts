import { envelope, toImageResult, toProtoFormat } from "./image-io.js";
import type { GenerateRequest } from "../../gen/atelier/generation/v1/generation_service.js";
import { entriesForTask } from "../../models/catalog/model-catalog.js";
import { assertValidRequest, GENERATION_SIZE_HINT, generationParams } from "../../models/requests/generation-request.js";
import { namedGenerationModel } from "../../models/requests/generation-model-choice.js";
import { assertOutputSize } from "../../core/image-limits.js";
import type { RequestContext } from "../context.js";
import { catalogSpeaksFor } from "./workers-catalog.js";
import type { OperationInput, OperationOutput } from "../../contract/operations.js";

export type GenerateInput = OperationInput<"generate">;

/** The worker's request; the wire's zero values stand for fields not given. */
function generateRequest(input: GenerateInput): GenerateRequest {
  return {
    prompt: input.prompt,
    width: input.width ?? 0,
    height: input.height ?? 0,
    model: input.model ?? "",
    negativePrompt: input.negativePrompt ?? "",
    steps: input.steps ?? 0,
    guidanceScale: input.guidanceScale,
    seed: input.seed,
    scheduler: input.scheduler ?? "",
    outputFormat: toProtoFormat(input.outputFormat),
  };
}

/**
 * The worker's checks that need no installed model (workers/generation/), so a job is refused with
 * the synchronous call's error before it is accepted: the fields' bounds, and for a named model, that
 * the catalog knows it (when the generation worker is the catalog's: see workers-catalog.ts), that it takes the tuning fields given, the size within its bounds and the
 * result within the output limit. With no model named, the default depends on what is installed, so
 * only a width and height both given are checked against the output limit, which no model can pass.
 */
export async function precheckGenerate(input: GenerateInput, ctx: RequestContext): Promise<void> {
  const request = generateRequest(input);
  assertValidRequest(request);
  const limits = ctx.services.config.images;
  if (input.model === undefined) {
    if (input.width !== undefined && input.height !== undefined) assertOutputSize(input.width, input.height, limits, GENERATION_SIZE_HINT);
    return;
  }
  const entries = entriesForTask("generate");
  // A model of a generation worker elsewhere is that worker's to judge, once the job runs.
  if (!entries.some((entry) => entry.id === input.model) && !catalogSpeaksFor(ctx, "generation")) return;
  const params = generationParams(request, namedGenerationModel(input.model, entries), entries);
  assertOutputSize(params.width, params.height, limits, GENERATION_SIZE_HINT);
}

export async function generate(input: OperationInput<"generate">, ctx: RequestContext): Promise<OperationOutput<"generate">> {
  const result = await ctx.services.workers.generate(generateRequest(input), { signal: ctx.signal });
  return {
    ...envelope(ctx, result.model),
    data: [await toImageResult(ctx, result.image)],
    seed: result.seed,
    steps: result.steps,
    ...(result.interpretation ? { interpretation: result.interpretation } : {}),
  };
}
