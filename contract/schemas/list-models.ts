/** The answer of `GET /v1/models` (the model catalog as this server sees it), and its documented example. */
import { z } from "zod";
import { GENERATION_OPTIONS } from "../../models/catalog/catalog-types.js";
import type { OperationExamples } from "../operation-examples.js";

/** The model list takes nothing. */
export const listModelsInput = z.void();

export const modelRecordSchema = z.object({
  id: z.string().meta({ description: "The value accepted in `model` (or `style` for style-transfer records)." }),
  object: z.literal("model"),
  task: z.enum(["generate", "upscale", "style-transfer", "background-remove", "prompt-improve"]),
  name: z.string(),
  description: z.string(),
  license: z.string().meta({ description: "SPDX id or short licence text." }),
  nonCommercial: z.boolean().meta({ description: "True when the licence forbids commercial use." }),
  installed: z.boolean().meta({ description: "Whether the weights are installed on this server." }),
  disabled: z.boolean().meta({ description: "Whether the operator disabled it." }),
  installCommand: z.string().optional().meta({ description: "How an operator installs it, when it is not installed." }),
  attribution: z.string().optional(),
  sizeBytes: z.int().meta({ description: "Total size of the weights in bytes; 0 when none, or not known before download (hub exports not pinned in the catalog)." }),
  photographic: z.boolean().optional().meta({ description: "Generation models: suitable for photographic backgrounds." }),
  generation: z
    .object({
      defaultWidth: z.int(),
      defaultHeight: z.int(),
      minSize: z.int(),
      maxWidth: z.int(),
      maxHeight: z.int(),
      sizeMultiple: z.int(),
      options: z.array(z.enum(GENERATION_OPTIONS)).meta({ description: "The tuning fields of `POST /api/v1/generate` the model takes; a request giving another answers 400." }),
    })
    .optional()
    .meta({ description: "Size rules of a generation model, in pixels." }),
  upscale: z
    .object({ nativeScales: z.array(z.int()), supportedScales: z.array(z.int()) })
    .optional()
    .meta({ description: "Scales of an upscaling model." }),
  details: z.record(z.string(), z.unknown()).optional().meta({ description: "Extra facts (presets, previews)." }),
});

export const listModelsOutput = z.object({
  object: z.literal("list"),
  data: z.array(modelRecordSchema),
});

export const listModelsExamples: OperationExamples = {
  needs: [],
  success: {
    summary: "The catalog (two of its records shown)",
    response: {
      object: "list",
      data: [
        {
          id: "lanczos",
          object: "model",
          task: "upscale",
          name: "Lanczos-3",
          description: "Classical Lanczos-3 resampling: no model weights, always available.",
          license: "MIT",
          nonCommercial: false,
          installed: true,
          disabled: false,
          sizeBytes: 0,
          upscale: { nativeScales: [2, 3, 4, 5, 6, 7, 8], supportedScales: [2, 3, 4, 5, 6, 7, 8] },
        },
        {
          id: "cvae-quickdraw",
          object: "model",
          task: "generate",
          name: "Quick, Draw! doodles",
          description: "Draws one of 50 Quick, Draw! classes named in the prompt as a pen doodle.",
          license: "MIT",
          nonCommercial: false,
          installed: false,
          disabled: false,
          installCommand: "npm run models -- pull cvae-quickdraw",
          sizeBytes: 1835008,
          photographic: false,
          generation: { defaultWidth: 256, defaultHeight: 256, minSize: 28, maxWidth: 1024, maxHeight: 1024, sizeMultiple: 1, options: [] },
        },
      ],
    },
  },
};
