import { AtelierError } from "../../core/errors.js";
import type { RequestContext } from "../context.js";
import { envelope } from "./image-io.js";
import type { OperationInput, OperationOutput } from "../../contract/operations.js";

export async function improvePrompt(input: OperationInput<"prompt.improve">, ctx: RequestContext): Promise<OperationOutput<"prompt.improve">> {
  const result = await ctx.services.workers.improvePrompt(
    { prompt: input.prompt, style: input.style ?? "", mood: input.mood ?? "", seed: input.seed, variants: input.variants, maxTokens: 0 },
    { signal: ctx.signal },
  );
  const [first] = result.variants;
  if (!first) throw new AtelierError("INTERNAL", "The prompt engine returned no prompt.");
  return {
    ...envelope(ctx, result.model),
    prompt: first.prompt,
    negativePrompt: first.negativePrompt,
    original: input.prompt,
    style: input.style ?? "",
    mood: input.mood ?? "",
    seed: result.seed,
    variants: result.variants.map((variant) => ({
      prompt: variant.prompt,
      negativePrompt: variant.negativePrompt,
      subject: variant.subject,
      styleTerms: variant.styleTerms,
      moodTerms: variant.moodTerms,
      detailTerms: variant.detailTerms,
    })),
  };
}
