import { z } from "zod";
import { ModelTask, type ModelRecord } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { GENERATION_OPTIONS, type GenerationOption } from "../../models/catalog/catalog-types.js";

const isGenerationOption = (value: string): value is GenerationOption => (GENERATION_OPTIONS as readonly string[]).includes(value);
import { publicProcedure } from "./procedure-bases.js";

const TASK_NAMES: Record<ModelTask, string | undefined> = {
  [ModelTask.MODEL_TASK_GENERATE]: "generate",
  [ModelTask.MODEL_TASK_UPSCALE]: "upscale",
  [ModelTask.MODEL_TASK_STYLE_TRANSFER]: "style-transfer",
  [ModelTask.MODEL_TASK_BACKGROUND_REMOVE]: "background-remove",
  [ModelTask.MODEL_TASK_PROMPT_IMPROVE]: "prompt-improve",
  [ModelTask.MODEL_TASK_UNSPECIFIED]: undefined,
  [ModelTask.UNRECOGNIZED]: undefined,
};

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

function toJson(record: ModelRecord): z.infer<typeof modelRecordSchema> | undefined {
  const task = TASK_NAMES[record.task];
  if (!task) return undefined;
  return {
    id: record.id,
    object: "model",
    task: task as z.infer<typeof modelRecordSchema>["task"],
    name: record.name,
    description: record.description,
    license: record.license,
    nonCommercial: record.nonCommercial,
    installed: record.installed,
    disabled: record.disabled,
    ...(record.installCommand && !record.installed ? { installCommand: record.installCommand } : {}),
    ...(record.attribution ? { attribution: record.attribution } : {}),
    sizeBytes: record.sizeBytes,
    ...(task === "generate" ? { photographic: record.photographic } : {}),
    ...(record.generation ? { generation: { ...record.generation, options: record.generation.options.filter(isGenerationOption) } } : {}),
    ...(record.upscale ? { upscale: record.upscale } : {}),
    ...(record.detailsJson ? { details: JSON.parse(record.detailsJson) as Record<string, unknown> } : {}),
  };
}

export const listModelsProcedure = publicProcedure
  .meta({
    openapi: {
      method: "GET",
      path: "/v1/models",
      protect: false,
      tags: ["models"],
      summary: "List the models",
      description:
        "Every model this server knows, with whether it is installed, its licence and its constraints. Needs no API key and does not count against the quota.",
    },
    examples: {
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
    },
  })
  .input(z.void())
  .output(listModelsOutput)
  .query(async ({ ctx }) => {
    const { models } = await ctx.services.workers.listModels({ task: ModelTask.MODEL_TASK_UNSPECIFIED }, { signal: ctx.signal });
    return { object: "list" as const, data: models.flatMap((record) => toJson(record) ?? []) };
  });
