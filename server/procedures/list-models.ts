import { z } from "zod";
import { ModelTask, type ModelRecord } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { GENERATION_OPTIONS, type GenerationOption } from "../../models/catalog/catalog-types.js";

const isGenerationOption = (value: string): value is GenerationOption => (GENERATION_OPTIONS as readonly string[]).includes(value);
import type { OperationInput, OperationOutput } from "../../contract/operations.js";
import { modelRecordSchema } from "../../contract/schemas/list-models.js";
import type { RequestContext } from "../context.js";

const TASK_NAMES: Record<ModelTask, string | undefined> = {
  [ModelTask.MODEL_TASK_GENERATE]: "generate",
  [ModelTask.MODEL_TASK_UPSCALE]: "upscale",
  [ModelTask.MODEL_TASK_STYLE_TRANSFER]: "style-transfer",
  [ModelTask.MODEL_TASK_BACKGROUND_REMOVE]: "background-remove",
  [ModelTask.MODEL_TASK_PROMPT_IMPROVE]: "prompt-improve",
  [ModelTask.MODEL_TASK_UNSPECIFIED]: undefined,
  [ModelTask.UNRECOGNIZED]: undefined,
};

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

export async function listModels(_input: OperationInput<"models.list">, ctx: RequestContext): Promise<OperationOutput<"models.list">> {
  const { models } = await ctx.services.workers.listModels({ task: ModelTask.MODEL_TASK_UNSPECIFIED }, { signal: ctx.signal });
  return { object: "list" as const, data: models.flatMap((record) => toJson(record) ?? []) };
}
