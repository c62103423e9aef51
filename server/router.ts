/**
 * The application router, built from the list of operations (contract/operations.ts): each entry
 * becomes a procedure at its id (`tools.upscale` nests `upscale` under `tools`), open or metered as
 * the entry says, validated by its schemas, described for OpenAPI by its metadata, and run by its
 * handler (server/procedures/handlers.ts). Internal TypeScript services import `AppRouter` (types
 * only) and call it over HTTP at `/trpc`; the REST facade calls the same procedures at `/api/v1`.
 */
import type { z } from "zod";
import { isMetered, OPERATIONS, type Operation, type OperationById, type OperationId } from "../contract/operations.js";
import type { AtelierMeta } from "../contract/operation-examples.js";
import { HANDLERS } from "./procedures/handlers.js";
import { meteredProcedure, publicProcedure } from "./procedures/procedure-bases.js";
import type { RequestContext } from "./context.js";
import { router } from "./trpc.js";

function metaOf(operation: Operation): AtelierMeta {
  return {
    openapi: {
      method: operation.method,
      path: operation.path,
      protect: isMetered(operation),
      tags: [...operation.tags],
      summary: operation.summary,
      description: operation.description,
    },
    examples: operation.examples,
  };
}

// Metered procedures add the caller's key to the context; handlers do not read it, so both kinds
// take one base type here.
const baseOf = (operation: Operation) => (isMetered(operation) ? (meteredProcedure as unknown as typeof publicProcedure) : publicProcedure);

type Resolver<I extends z.ZodType, O extends z.ZodType> = (input: z.output<I>, ctx: RequestContext) => Promise<z.input<O>>;

// The resolver's result is checked against `O` by Resolver's type; tRPC types the procedure's
// input and output from the two schemas.
function mutationOf<I extends z.ZodType, O extends z.ZodType>(operation: Operation, input: I, output: O, handler: Resolver<I, O>) {
  return baseOf(operation)
    .meta(metaOf(operation))
    .input(input)
    .output(output)
    .mutation(({ input, ctx }) => handler(input as z.output<I>, ctx) as never);
}

function queryOf<I extends z.ZodType, O extends z.ZodType>(operation: Operation, input: I, output: O, handler: Resolver<I, O>) {
  return baseOf(operation)
    .meta(metaOf(operation))
    .input(input)
    .output(output)
    .query(({ input, ctx }) => handler(input as z.output<I>, ctx) as never);
}

type ProcedureOf<Op extends Operation> = Op extends { method: infer M; input: infer I extends z.ZodType; output: infer O extends z.ZodType }
  ? M extends "GET"
    ? ReturnType<typeof queryOf<I, O>>
    : ReturnType<typeof mutationOf<I, O>>
  : never;

/** `{ tools: { upscale: P } }` for the id `tools.upscale`. */
type Nested<Path extends string, P> = Path extends `${infer Head}.${infer Rest}` ? { [K in Head]: Nested<Rest, P> } : { [K in Path]: P };
type Intersection<U> = (U extends unknown ? (union: U) => void : never) extends (all: infer I) => void ? I : never;
type ProcedureRecord = Intersection<{ [Id in OperationId]: Nested<Id, ProcedureOf<OperationById<Id>>> }[OperationId]>;

function procedureRecord(): ProcedureRecord {
  const record: Record<string, unknown> = {};
  for (const operation of OPERATIONS) {
    const segments = operation.id.split(".");
    let node = record;
    for (const segment of segments.slice(0, -1)) node = (node[segment] ??= {}) as Record<string, unknown>;
    const handler = HANDLERS[operation.id] as unknown as Resolver<z.ZodType, z.ZodType>;
    const build = operation.method === "GET" ? queryOf : mutationOf;
    node[segments.at(-1)!] = build(operation, operation.input, operation.output, handler);
  }
  return record as ProcedureRecord;
}

export const appRouter = router(procedureRecord());

export type AppRouter = typeof appRouter;
