/**
 * The handler of every operation of contract/operations.ts, by id: what the operation does once its
 * input is valid and its caller allowed. The router (server/router.ts) serves them through tRPC and
 * REST; the job runner calls them through {@link runOperation}. The type makes a handler missing
 * for a listed operation a compile error.
 */
import { invalidInput } from "../trpc-errors.js";
import { AtelierError } from "../../core/errors.js";
import { OPERATIONS, type OperationById, type OperationId, type OperationInput, type OperationOutput } from "../../contract/operations.js";
import type { RequestContext } from "../context.js";
import { removeBackground } from "./background-remove.js";
import { generate } from "./generate.js";
import { listModels } from "./list-models.js";
import { improvePrompt } from "./prompt-improve.js";
import { styleTransfer } from "./style-transfer.js";
import { upscale } from "./upscale.js";

export type Handler<Id extends OperationId> = (input: OperationInput<Id>, ctx: RequestContext) => Promise<OperationOutput<Id>>;

export const HANDLERS: { readonly [Id in OperationId]: Handler<Id> } = {
  generate,
  "tools.upscale": upscale,
  "tools.styleTransfer": styleTransfer,
  "tools.backgroundRemove": removeBackground,
  "prompt.improve": improvePrompt,
  "models.list": listModels,
};

export function handlerOf<Id extends OperationId>(operation: OperationById<Id>): Handler<Id> {
  return HANDLERS[operation.id as Id];
}

/**
 * Runs an operation outside tRPC (a job), exactly as its procedure would once the caller is
 * allowed: the input validated by the operation's schema (400 with the same issues), the handler,
 * and the answer shaped by the output schema.
 */
export async function runOperation(id: OperationId, input: unknown, ctx: RequestContext): Promise<unknown> {
  const operation = OPERATIONS.find((candidate) => candidate.id === id)!;
  const parsed = await operation.input.safeParseAsync(input);
  if (!parsed.success) {
    throw invalidInput(parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message })));
  }
  const result = await (HANDLERS[id] as (input: unknown, ctx: RequestContext) => Promise<unknown>)(parsed.data, ctx);
  const shaped = await operation.output.safeParseAsync(result);
  if (!shaped.success) throw new AtelierError("INTERNAL", `Output validation failed for ${id}.`, { cause: shaped.error });
  return shaped.data;
}
