/**
 * The operations the playground offers, taken from the procedures themselves: the input schema the
 * API validates with and the REST path and summary of their OpenAPI metadata. Adding a procedure
 * here is all it takes for it to get a page.
 */
import type { OpenApiMeta } from "trpc-to-openapi";
import type { z } from "zod";
import { backgroundRemoveInput, backgroundRemoveProcedure } from "../../server/procedures/background-remove.js";
import { generateInput, generateProcedure } from "../../server/procedures/generate.js";
import { promptImproveInput, promptImproveProcedure } from "../../server/procedures/prompt-improve.js";
import { styleTransferInput, styleTransferProcedure } from "../../server/procedures/style-transfer.js";
import { upscaleInput, upscaleProcedure } from "../../server/procedures/upscale.js";

export interface PlaygroundOperation {
  /** The page's path segment: `/playground/<slug>`. */
  slug: string;
  /** Catalog task whose models fill the `model` field's suggestions. */
  task: "generate" | "upscale" | "style-transfer" | "background-remove" | "prompt-improve";
  /** The REST path under `/api`, e.g. `/v1/tools/upscale`. */
  path: string;
  method: "POST";
  summary: string;
  description: string;
  input: z.ZodType;
  /** Whether the answer carries images (`data[].url`) rather than text. */
  returnsImages: boolean;
}

function describe(procedure: { _def: { meta?: unknown } }): Pick<PlaygroundOperation, "path" | "method" | "summary" | "description"> {
  const openapi = (procedure._def.meta as OpenApiMeta | undefined)?.openapi;
  if (!openapi || openapi.method !== "POST") throw new Error("playground operations are POST procedures with OpenAPI metadata");
  return { path: openapi.path, method: "POST", summary: openapi.summary ?? openapi.path, description: openapi.description ?? "" };
}

export const PLAYGROUND_OPERATIONS: readonly PlaygroundOperation[] = [
  { slug: "upscale", task: "upscale", input: upscaleInput, returnsImages: true, ...describe(upscaleProcedure) },
  { slug: "generate", task: "generate", input: generateInput, returnsImages: true, ...describe(generateProcedure) },
  { slug: "style-transfer", task: "style-transfer", input: styleTransferInput, returnsImages: true, ...describe(styleTransferProcedure) },
  { slug: "background-remove", task: "background-remove", input: backgroundRemoveInput, returnsImages: true, ...describe(backgroundRemoveProcedure) },
  { slug: "prompt-improve", task: "prompt-improve", input: promptImproveInput, returnsImages: false, ...describe(promptImproveProcedure) },
];

export function playgroundOperation(slug: string): PlaygroundOperation | undefined {
  return PLAYGROUND_OPERATIONS.find((operation) => operation.slug === slug);
}
