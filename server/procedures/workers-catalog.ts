/**
 * Whose catalog judges a named model before a job is accepted. The router's catalog is the one the
 * in-process workers and the catalog worker run; a worker at another address
 * (ATELIER_GENERATION_WORKER, ATELIER_STYLE_WORKER) may serve models of its own, so a model the
 * router does not know is refused up front only when that worker is the catalog's.
 */
import type { ModelTask } from "../../gen/atelier/catalog/v1/catalog_service.js";
import type { RequestContext } from "../context.js";

type ModelService = "generation" | "style";

/** Whether the catalog worker answers for the worker that runs the service's models. */
export function catalogSpeaksFor(ctx: RequestContext, service: ModelService): boolean {
  const { addresses } = ctx.services.config.workers;
  return addresses[service] === addresses.catalog;
}

/** The ids of the workers' usable (installed, enabled) models for the task. */
export async function usableWorkerModels(ctx: RequestContext, task: ModelTask): Promise<string[]> {
  const { models } = await ctx.services.workers.listModels({ task }, { signal: ctx.signal });
  return models.filter((model) => model.installed && !model.disabled).map((model) => model.id);
}
