/**
 * Every public operation of the API, once: what it is called (its id: the tRPC path, which is also
 * the key scope that allows it), where REST serves it, what it takes and answers, whether a key and
 * the quota apply, what it is counted as on the usage pages, and how the OpenAPI document presents
 * it. The tRPC router is built from this list (server/router.ts); the REST routes, the OpenAPI
 * document, early authentication, metrics labels, jobs, the console's playground, key scopes and
 * usage names all read it, so an operation added here is served, documented, metered and offered
 * everywhere. Its handler is the only other thing to write (server/procedures/).
 */
import type { z } from "zod";
import { defaultOf } from "../core/config.js";
import type { ModelTask } from "../models/catalog/catalog-types.js";
import type { OperationExamples } from "./operation-examples.js";
import { backgroundRemoveExamples, backgroundRemoveInput, backgroundRemoveOutput } from "./schemas/background-remove.js";
import { generateExamples, generateInput, generateOutput } from "./schemas/generate.js";
import { listModelsExamples, listModelsInput, listModelsOutput } from "./schemas/list-models.js";
import { promptImproveExamples, promptImproveInput, promptImproveOutput } from "./schemas/prompt-improve.js";
import { styleTransferExamples, styleTransferInput, styleTransferOutput } from "./schemas/style-transfer.js";
import { upscaleExamples, upscaleInput, upscaleOutput } from "./schemas/upscale.js";

/** The OpenAPI tags operations are grouped under (their descriptions are the document's). */
export type OperationTag = "generation" | "tools" | "prompt" | "models";

/** What a metered operation (one that needs a key) adds: calls are charged to the quota and counted for usage. */
export interface Metering {
  /** What the key scope allowing it (the operation's id) lets a key do, as people read it (console forms, error messages). */
  scopeLabel: string;
  /** The name its calls are counted under on the usage pages, stored with each count: never rename it. */
  usageName: string;
}

export interface OperationSpec {
  /** The tRPC path (`tools.upscale`); a key scoped to it may call it. Dots nest it in the router. */
  id: string;
  method: "GET" | "POST";
  /** The REST path under `/api`. */
  path: `/v1/${string}`;
  /** Present when the operation needs a key; absent for an open one (no key, no quota, no usage). */
  metered?: Metering;
  /** The catalog task of the models it runs (what its `model` field names); absent when it runs none of its own choosing. */
  modelTask?: ModelTask;
  /** True when the answer carries images (`data[].url`): raw image answers, stored job images, playground previews. */
  returnsImages: boolean;
  tags: readonly OperationTag[];
  summary: string;
  description: string;
  input: z.ZodType;
  output: z.ZodObject;
  /** The documented examples, which the contract test (test/contract/) sends to a real server. */
  examples: OperationExamples;
}

export const OPERATIONS = [
  {
    id: "generate",
    method: "POST",
    path: "/v1/generate",
    metered: { scopeLabel: "Generate images (POST /api/v1/generate)", usageName: "generate" },
    modelTask: "generate",
    returnsImages: true,
    tags: ["generation"],
    summary: "Generate an image from a text prompt",
    description:
      "Only `prompt` is required; size and model default from the model catalog (the best installed model: a Stable Diffusion " +
      "model when one is installed, else the `cvae-quickdraw` doodle model). Sizes outside the chosen model's limits answer 400 " +
      "with the allowed range. The doodle model draws one of its 50 Quick, Draw! classes named in the prompt (plurals and common " +
      "synonyms work; `interpretation` reports the class); a prompt naming none answers 400 listing them. The response always " +
      "reports the seed; the same seed and parameters give the same image.",
    input: generateInput,
    output: generateOutput,
    examples: generateExamples,
  },
  {
    id: "tools.upscale",
    method: "POST",
    path: "/v1/tools/upscale",
    metered: { scopeLabel: "Upscale (POST /api/v1/tools/upscale)", usageName: "tools/upscale" },
    modelTask: "upscale",
    returnsImages: true,
    tags: ["tools"],
    summary: "Upscale an image",
    description: "Enlarges the image at `imageUrl` by `scale` on both sides and returns it as a data URL.",
    input: upscaleInput,
    output: upscaleOutput,
    examples: upscaleExamples,
  },
  {
    id: "tools.styleTransfer",
    method: "POST",
    path: "/v1/tools/style-transfer",
    metered: { scopeLabel: "Style transfer (POST /api/v1/tools/style-transfer)", usageName: "tools/style-transfer" },
    modelTask: "style-transfer",
    returnsImages: true,
    tags: ["tools"],
    summary: "Apply an artistic style to an image",
    description:
      "Repaints the image at `imageUrl` in `style` and returns it at the source's size. The networks paint strokes of a fixed size in pixels, so the style is applied at a working resolution " +
      `(longest side ATELIER_STYLE_WORKING_SIZE, default ${defaultOf("ATELIER_STYLE_WORKING_SIZE")} px; smaller images at their own size) and the painting is resized back with Lanczos3. Transparency is kept exactly; grey images come back in colour.`,
    input: styleTransferInput,
    output: styleTransferOutput,
    examples: styleTransferExamples,
  },
  {
    id: "tools.backgroundRemove",
    method: "POST",
    path: "/v1/tools/background-remove",
    metered: { scopeLabel: "Background removal (POST /api/v1/tools/background-remove)", usageName: "tools/background-remove" },
    modelTask: "background-remove",
    returnsImages: true,
    tags: ["tools"],
    summary: "Remove or replace the background of an image",
    description:
      "Separates the subject of the image at `imageUrl` from its background and removes or replaces the background. " +
      "The result has the source's size: a PNG (or WebP) cutout with a soft alpha edge whose colours are cleaned of the old background, or a composite.",
    input: backgroundRemoveInput,
    output: backgroundRemoveOutput,
    examples: backgroundRemoveExamples,
  },
  {
    id: "prompt.improve",
    method: "POST",
    path: "/v1/prompt/improve",
    metered: { scopeLabel: "Prompt improvement (POST /api/v1/prompt/improve)", usageName: "prompt/improve" },
    modelTask: "prompt-improve",
    returnsImages: false,
    tags: ["prompt"],
    summary: "Improve a prompt",
    description: "Turns a short idea into a detailed prompt that image models render well.",
    input: promptImproveInput,
    output: promptImproveOutput,
    examples: promptImproveExamples,
  },
  {
    id: "models.list",
    method: "GET",
    path: "/v1/models",
    returnsImages: false,
    tags: ["models"],
    summary: "List the models",
    description: "Every model this server knows, with whether it is installed, its licence and its constraints. Needs no API key and does not count against the quota.",
    input: listModelsInput,
    output: listModelsOutput,
    examples: listModelsExamples,
  },
] as const satisfies readonly OperationSpec[];

export type Operation = (typeof OPERATIONS)[number];
export type OperationId = Operation["id"];
export type OperationById<Id extends OperationId> = Extract<Operation, { id: Id }>;
export type MeteredOperation = Extract<Operation, { metered: Metering }>;
export type MeteredOperationId = MeteredOperation["id"];

/** What the operation's handler receives (the input after its schema's defaults) and returns. */
export type OperationInput<Id extends OperationId> = z.output<OperationById<Id>["input"]>;
export type OperationOutput<Id extends OperationId> = z.input<OperationById<Id>["output"]>;

const BY_ID: ReadonlyMap<string, Operation> = new Map(OPERATIONS.map((operation) => [operation.id, operation]));

export function operationById(id: string): Operation | undefined {
  return BY_ID.get(id);
}

export function isOperationId(value: unknown): value is OperationId {
  return typeof value === "string" && BY_ID.has(value);
}

export function isMetered(operation: Operation): operation is MeteredOperation {
  return "metered" in operation;
}

/** The operations that need a key, in list order: their ids are the key scopes. */
export const METERED_OPERATIONS: readonly MeteredOperation[] = OPERATIONS.filter(isMetered);

/** The operation's OpenAPI operationId, as trpc-to-openapi names it (`tools-upscale`). */
export function openApiOperationId(operation: Pick<Operation, "id">): string {
  return operation.id.replaceAll(".", "-");
}
