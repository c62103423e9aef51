/** The request and answer of `POST /v1/generate` (text to image), and the examples the OpenAPI document shows and the contract test sends. */
import { z } from "zod";
import { LIMITS } from "../../core/limits.js";
import { boundedInteger, boundedNumber, boundedText, modelIdField, outputFormatField, requestBody } from "../field-schemas.js";
import { imageEnvelope } from "../response-schemas.js";
import { EXAMPLE_RESULT_URL } from "../example-images.js";
import { generationModelsText } from "../catalog-docs.js";
import type { OperationExamples } from "../operation-examples.js";

export const generateInput = requestBody({
  prompt: boundedText("prompt", LIMITS.promptCharacters).meta({ description: `What to draw, ${LIMITS.promptCharacters.min} to ${LIMITS.promptCharacters.max} characters.`, example: "an owl" }),
  width: boundedInteger("width", LIMITS.generationSide)
    .optional()
    .meta({ description: "Width in pixels. Default and limits come from the model record (`GET /api/v1/models`)." }),
  height: boundedInteger("height", LIMITS.generationSide)
    .optional()
    .meta({ description: "Height in pixels. Default and limits come from the model record." }),
  model: modelIdField(`Generation model id, one of the catalog's: ${generationModelsText()}. Default: the best installed generation model.`).optional(),
  negativePrompt: boundedText("negativePrompt", LIMITS.negativePromptCharacters).optional().meta({ description: "What to avoid (beyond the spec)." }),
  steps: boundedInteger("steps", LIMITS.steps).optional().meta({ description: "Denoising steps (beyond the spec). Default: the model's." }),
  guidanceScale: boundedNumber("guidanceScale", LIMITS.guidanceScale).optional().meta({ description: "Classifier-free guidance scale (beyond the spec)." }),
  seed: boundedInteger("seed", LIMITS.seed).optional().meta({ description: "Random seed (beyond the spec); the response reports the one used." }),
  scheduler: z.string().max(LIMITS.schedulerCharacters.max).optional().meta({ description: "Scheduler name (beyond the spec), e.g. `euler`, `dpmpp-2m-karras`, `lcm`." }),
  outputFormat: outputFormatField,
});

export const generateOutput = z.object({
  ...imageEnvelope,
  seed: z.int().meta({ description: "The seed used; the same seed and parameters give the same image." }),
  steps: z.int().meta({ description: "Steps run." }),
  interpretation: z.string().optional().meta({ description: "How the model read the prompt, when that is informative." }),
});

export const generateExamples: OperationExamples = {
  needs: ["cvae-quickdraw"],
  success: {
    summary: "Draw an owl with the default doodle model",
    request: { prompt: "an owl", seed: 7 },
    response: {
      id: "req_3f9c2d7e",
      created: 1795256153,
      model: "cvae-quickdraw",
      data: [{ url: EXAMPLE_RESULT_URL, mimeType: "image/png", width: 256, height: 256 }],
      seed: 7,
      steps: 1,
      interpretation: "owl",
    },
  },
  errors: {
    MODEL_NOT_INSTALLED: {
      summary: "A model this server has not installed (here LCM Dreamshaper)",
      request: { prompt: "a lighthouse on a cliff at dusk", model: "lcm-dreamshaper-v7" },
      message: "The model \"lcm-dreamshaper-v7\" is not installed on this server (files missing). An operator installs it with `npm run models -- pull lcm-dreamshaper-v7`.",
    },
    OUTPUT_TOO_LARGE: {
      summary: "On a server whose output limit (ATELIER_MAX_OUTPUT_PIXELS) is under 1 MP, a 1024x1024 drawing",
      request: { prompt: "an owl", width: 1024, height: 1024 },
      message: "The result would be 1024x1024 (1.0 MP), over this server's limit of 1.0 MP (ATELIER_MAX_OUTPUT_PIXELS). Ask for a smaller width and height.",
    },
    INVALID_INPUT: {
      summary: "An empty prompt",
      request: { prompt: "" },
      message: "Invalid request: Expected prompt of 1 to 2000 characters but received 0",
      issues: [{ path: "prompt", message: "Expected prompt of 1 to 2000 characters but received 0" }],
    },
  },
};
