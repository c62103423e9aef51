/**
 * The operations the playground offers: every metered POST operation of the list
 * (contract/operations.ts), with the input schema the API validates with, its REST path and summary.
 * An operation added to the list gets a page with no change here.
 */
import type { z } from "zod";
import { METERED_OPERATIONS } from "../../contract/operations.js";
import type { ModelTask } from "../../models/catalog/catalog-types.js";

export interface PlaygroundOperation {
  /** The page's path segment: `/playground/<slug>`, the catalog task the operation runs. */
  slug: string;
  /** Catalog task whose models fill the `model` field's suggestions. */
  task: ModelTask;
  /** The REST path under `/api`, e.g. `/v1/tools/upscale`. */
  path: string;
  method: "POST";
  summary: string;
  description: string;
  input: z.ZodType;
  /** Whether the answer carries images (`data[].url`) rather than text. */
  returnsImages: boolean;
}

export const PLAYGROUND_OPERATIONS: readonly PlaygroundOperation[] = METERED_OPERATIONS.flatMap((operation) => {
  const task: ModelTask | undefined = "modelTask" in operation ? operation.modelTask : undefined;
  if (operation.method !== "POST" || task === undefined) return [];
  const { path, summary, description, input, returnsImages } = operation;
  return [{ slug: task, task, path, method: operation.method, summary, description, input, returnsImages }];
});

export function playgroundOperation(slug: string): PlaygroundOperation | undefined {
  return PLAYGROUND_OPERATIONS.find((operation) => operation.slug === slug);
}
