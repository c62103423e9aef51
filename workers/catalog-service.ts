/** gRPC CatalogService: the catalog with each model's installed state, as protobuf records. */
import {
  CatalogServiceService,
  ModelTask as ProtoModelTask,
  type ListModelsRequest,
  type ListModelsResponse,
  type ModelRecord,
} from "../gen/atelier/catalog/v1/catalog_service.js";
import type { Logger } from "../core/logger.js";
import { unaryHandler } from "./grpc-handler.js";
import type { CatalogEntry, ModelTask } from "../models/catalog/model-catalog.js";
import { weightSize } from "../models/catalog/model-catalog.js";

export const TASK_TO_PROTO: Record<ModelTask, ProtoModelTask> = {
  generate: ProtoModelTask.MODEL_TASK_GENERATE,
  upscale: ProtoModelTask.MODEL_TASK_UPSCALE,
  "style-transfer": ProtoModelTask.MODEL_TASK_STYLE_TRANSFER,
  "background-remove": ProtoModelTask.MODEL_TASK_BACKGROUND_REMOVE,
  "prompt-improve": ProtoModelTask.MODEL_TASK_PROMPT_IMPROVE,
};

export interface ModelInventory {
  /** Every catalogued model in catalog order. */
  entries(): readonly CatalogEntry[];
  /** Whether the model's weights are present (built-in models always are). */
  isInstalled(entry: CatalogEntry): boolean;
  /** Whether the operator disabled it (non-commercial licence). */
  isDisabled(entry: CatalogEntry): boolean;
  /** How an operator installs it; undefined for built-in models. */
  installCommand(entry: CatalogEntry): string | undefined;
}

export function toModelRecord(entry: CatalogEntry, state: { installed: boolean; disabled: boolean; installCommand: string | undefined }): ModelRecord {
  const { installed, disabled, installCommand } = state;
  return {
    id: entry.id,
    task: TASK_TO_PROTO[entry.task],
    name: entry.name,
    description: entry.description,
    license: entry.license,
    nonCommercial: entry.nonCommercial,
    installed,
    installCommand: installCommand ?? "",
    attribution: entry.attribution ?? "",
    sizeBytes: weightSize(entry),
    generation: entry.generation && { ...entry.generation, options: [...entry.generation.options] },
    upscale: entry.upscale,
    photographic: entry.photographic ?? false,
    disabled,
    detailsJson: entry.details ? JSON.stringify(entry.details) : "",
  };
}

export function catalogServiceImplementation(inventory: ModelInventory, logger: Logger) {
  return {
    definition: CatalogServiceService,
    implementation: {
      listModels: unaryHandler<ListModelsRequest, ListModelsResponse>(logger, "ListModels", async (request) => ({
        models: inventory
          .entries()
          .filter((entry) => request.task === ProtoModelTask.MODEL_TASK_UNSPECIFIED || TASK_TO_PROTO[entry.task] === request.task)
          .map((entry) =>
            toModelRecord(entry, {
              installed: inventory.isInstalled(entry),
              disabled: inventory.isDisabled(entry),
              installCommand: inventory.installCommand(entry),
            }),
          ),
      })),
    },
  };
}
