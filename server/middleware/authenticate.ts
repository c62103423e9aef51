/**
 * Bearer-key authentication for metered procedures (server/access/access.ts), checked for the
 * operation called (the procedure's path, its id in the list); a key the facade already accepted
 * for it before reading the body is taken as it is.
 */
import type { MeteredOperationId } from "../../contract/operations.js";
import { authenticate as authenticateKey } from "../access/access.js";
import { middleware } from "../trpc.js";

export const authenticate = middleware(async ({ ctx, path, next }) => {
  const operation = path as MeteredOperationId;
  const apiKey = ctx.authenticated?.get(operation) ?? (await authenticateKey(ctx.services, ctx.authorization, operation));
  ctx.note?.({ keyId: apiKey.id });
  return next({ ctx: { apiKey } });
});
