/**
 * The choices of the playground's pickers, from the model catalog and what this server has
 * installed (the same list `GET /api/v1/models` answers): models per task, styles, the prompt
 * engine's style and mood presets, the schedulers the generation models name, and which tuning
 * options each generation model takes (`generation.options`), so the form can hide the others.
 */
import { z } from "zod";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import type { ModelTask } from "../../models/catalog/model-catalog.js";
import type { AtelierServices, RequestContext } from "../../server/context.js";
import { appRouter } from "../../server/router.js";

export interface ModelChoice {
  id: string;
  name: string;
  task: ModelTask;
  /** Installed, and not disabled by the operator: it can run. */
  usable: boolean;
  nonCommercial: boolean;
  photographic: boolean;
  /** Generation models: the tuning fields the model takes. */
  options: readonly string[];
  /** Generation models: the scheduler the model runs by default. */
  scheduler?: string;
}

export interface Preset {
  id: string;
  name: string;
}

export interface PlaygroundChoices {
  models: ModelChoice[];
  /** The prompt engine's presets (`details` of `prompt-builtin`). */
  promptStyles: Preset[];
  promptMoods: Preset[];
}

const presets = z.array(z.object({ id: z.string(), name: z.string() }));
const promptDetails = z.object({ styles: presets, moods: presets });
const diffusionDetails = z.object({ diffusion: z.object({ scheduler: z.string() }) });

/** The catalog with its installed state, as `GET /api/v1/models` answers it. */
export async function playgroundChoices(services: AtelierServices, requestId: string): Promise<PlaygroundChoices> {
  const context: RequestContext = { requestId, authorization: undefined, setHeader: () => {}, signal: new AbortController().signal, services };
  const records = (await appRouter.createCaller(context).models.list()).data;
  const models = records.map((record): ModelChoice => {
    const scheduler = diffusionDetails.safeParse(record.details).data?.diffusion.scheduler;
    return {
      id: record.id,
      name: record.name,
      task: record.task,
      usable: record.installed && !record.disabled,
      nonCommercial: record.nonCommercial,
      photographic: record.photographic === true,
      options: record.generation?.options ?? [],
      ...(scheduler ? { scheduler } : {}),
    };
  });
  const prompt = promptDetails.safeParse(records.find((record) => record.task === "prompt-improve")?.details ?? catalogEntry("prompt-builtin")?.details);
  return { models, promptStyles: prompt.data?.styles ?? [], promptMoods: prompt.data?.moods ?? [] };
}

export function modelsOf(choices: PlaygroundChoices, task: ModelTask): ModelChoice[] {
  return choices.models.filter((model) => model.task === task);
}

/** The generation model that runs when none is named: the first usable photographic one, else the first usable (models/requests/generation-model-choice.ts). */
export function defaultGenerationModel(choices: PlaygroundChoices): ModelChoice | undefined {
  const usable = modelsOf(choices, "generate").filter((model) => model.usable);
  return usable.find((model) => model.photographic) ?? usable[0];
}

/** The schedulers the catalog's generation models run by default, each once. */
export function schedulers(choices: PlaygroundChoices): string[] {
  return [...new Set(modelsOf(choices, "generate").flatMap((model) => (model.scheduler ? [model.scheduler] : [])))];
}
