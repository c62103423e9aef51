/**
 * The tRPC instance: context, OpenAPI metadata, and an error formatter that exposes only the
 * public error (code, message, requestId, issues) under `data`, never a stack or internal detail.
 */
import { initTRPC, type TRPCError } from "@trpc/server";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { ERROR_KINDS, toPublicError } from "../core/errors.js";
import type { RequestContext } from "./context.js";
import type { AtelierMeta } from "../contract/operation-examples.js";
import { atelierErrorOf, toTRPCError } from "./trpc-errors.js";

/**
 * The body of a tRPC error: the JSON-RPC code of the error's tRPC code, and the public error under
 * `data`. The router's error formatter, and the facade's answer for a call refused before tRPC runs
 * (facade/trpc-error-response.ts), so both read alike.
 */
export function trpcErrorShape(error: TRPCError, path: string | undefined, requestId: string | undefined) {
  const failure = atelierErrorOf(error);
  return {
    code: TRPC_ERROR_CODES_BY_KEY[error.code],
    message: failure.message,
    data: {
      ...toPublicError(failure, requestId ?? "unknown"),
      httpStatus: ERROR_KINDS[failure.code].http,
      path,
    },
  };
}

const t = initTRPC
  .context<RequestContext>()
  .meta<AtelierMeta>()
  .create({
    isDev: false,
    errorFormatter: ({ shape, error, ctx }) => ({ ...trpcErrorShape(error, shape.data.path, ctx?.requestId), code: shape.code }),
  });

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;

/** Logs internal faults once and gives every error its public tRPC code. */
const translateErrors = t.middleware(async ({ ctx, next, path }) => {
  const result = await next();
  if (result.ok) return result;
  const error = toTRPCError(result.error);
  const failure = atelierErrorOf(error);
  if (failure.code === "INTERNAL") {
    ctx.services.logger.error({ requestId: ctx.requestId, path, err: failure.cause ?? failure }, "request failed");
  }
  return { ...result, error };
});

/** Every procedure starts here, so input validation failures pass through translateErrors too. */
export const publicProcedure = t.procedure.use(translateErrors);
