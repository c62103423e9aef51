/**
 * The tRPC instance: context, OpenAPI metadata, and an error formatter that exposes only the
 * public error (code, message, requestId, issues) under `data`, never a stack or internal detail.
 */
import { initTRPC } from "@trpc/server";
import { ERROR_KINDS, toPublicError } from "../core/errors.js";
import type { RequestContext } from "./context.js";
import type { AtelierMeta } from "../contract/operation-examples.js";
import { atelierErrorOf, toTRPCError } from "./trpc-errors.js";

const t = initTRPC
  .context<RequestContext>()
  .meta<AtelierMeta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error, ctx }) {
      const failure = atelierErrorOf(error);
      return {
        code: shape.code,
        message: failure.message,
        data: {
          ...toPublicError(failure, ctx?.requestId ?? "unknown"),
          httpStatus: ERROR_KINDS[failure.code].http,
          path: shape.data.path,
        },
      };
    },
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
