/**
 * Charges each metered call to its key's quota before it runs and gives it back when the server,
 * not the client, failed it (server/access/access.ts); the rate-limit headers go on the answer.
 */
import type { ApiKeyRecord } from "../keys/api-key-store.js";
import { charge, refund } from "../access/access.js";
import { atelierErrorOf } from "../trpc-errors.js";
import { middleware } from "../trpc.js";

export const meterQuota = middleware(async ({ ctx, next }) => {
  const { apiKey } = ctx as typeof ctx & { apiKey: ApiKeyRecord };
  await charge(ctx.services, apiKey, ctx.setHeader);
  const result = await next();
  if (!result.ok) await refund(ctx.services, apiKey, atelierErrorOf(result.error), ctx.setHeader, ctx.requestId);
  return result;
});
