/** The request and answer of `POST /v1/prompt/improve`, and its documented examples. */
import { z } from "zod";
import { LIMITS } from "../../core/limits.js";
import { boundedInteger, boundedText, requestBody } from "../field-schemas.js";
import { operationEnvelope } from "../response-schemas.js";
import type { OperationExamples } from "../operation-examples.js";

export const promptImproveInput = requestBody({
  prompt: boundedText("prompt", LIMITS.promptCharacters).meta({ description: `The idea to improve, ${LIMITS.promptCharacters.min} to ${LIMITS.promptCharacters.max} characters.`, example: "a cat on a roof" }),
  style: boundedText("style", LIMITS.presetCharacters).optional().meta({ description: "A style preset id (see the prompt engine's record in `GET /api/v1/models`) or free text." }),
  mood: boundedText("mood", LIMITS.presetCharacters).optional().meta({ description: "A mood preset id or free text." }),
  seed: boundedInteger("seed", LIMITS.seed).optional().meta({ description: "Seed for reproducible variation (beyond the spec)." }),
  variants: boundedInteger("variants", LIMITS.promptVariants).default(1).meta({ description: `Alternatives to return, ${LIMITS.promptVariants.min} to ${LIMITS.promptVariants.max} (beyond the spec).` }),
});

const variantSchema = z.object({
  prompt: z.string(),
  negativePrompt: z.string(),
  subject: z.string(),
  styleTerms: z.array(z.string()),
  moodTerms: z.array(z.string()),
  detailTerms: z.array(z.string()),
});

export const promptImproveOutput = z.object({
  ...operationEnvelope,
  prompt: z.string().meta({ description: "The improved prompt." }),
  negativePrompt: z.string().meta({ description: "What to avoid, for models that take a negative prompt." }),
  original: z.string().meta({ description: "The prompt as sent." }),
  style: z.string().meta({ description: "The style as understood (preset id or the text sent); empty when none." }),
  mood: z.string().meta({ description: "The mood as understood; empty when none." }),
  seed: z.int().meta({ description: "The seed used." }),
  variants: z.array(variantSchema).meta({ description: "Every variant, the first being `prompt` itself, with the pieces each was built from." }),
});

export const promptImproveExamples: OperationExamples = {
  needs: [],
  success: {
    summary: "Improve a short idea with a style and a mood preset",
    request: { prompt: "a lighthouse at night", style: "cinematic", mood: "mysterious", seed: 3 },
    response: {
      id: "req_3f9c2d7e",
      created: 1795256153,
      model: "prompt-builtin",
      prompt: "a lighthouse at night, cinematic lighting, film still, mysterious atmosphere, fog, highly detailed",
      negativePrompt: "blurry, low quality, watermark, text",
      original: "a lighthouse at night",
      style: "cinematic",
      mood: "mysterious",
      seed: 3,
      variants: [
        {
          prompt: "a lighthouse at night, cinematic lighting, film still, mysterious atmosphere, fog, highly detailed",
          negativePrompt: "blurry, low quality, watermark, text",
          subject: "a lighthouse at night",
          styleTerms: ["cinematic lighting", "film still"],
          moodTerms: ["mysterious atmosphere", "fog"],
          detailTerms: ["highly detailed"],
        },
      ],
    },
  },
  errors: {
    INVALID_INPUT: {
      summary: "Too many variants",
      request: { prompt: "a lighthouse at night", variants: 9 },
      message: "Invalid request: Expected integer between 1 and 4 for variants but received 9",
      issues: [{ path: "variants", message: "Expected integer between 1 and 4 for variants but received 9" }],
    },
  },
};
