/**
 * Who is calling and what it costs, for the jobs API, through the router's own middleware: the
 * same Bearer check, quota counting and rate-limit headers as every synchronous operation.
 */
import { TRPCError } from "@trpc/server";
import type { RequestContext } from "../server/context.js";
import type { ApiKeyRecord } from "../server/keys/api-key-store.js";
import { authenticate } from "../server/middleware/authenticate.js";
import { meteredProcedure, publicProcedure } from "../server/procedures/procedure-bases.js";
import { atelierErrorOf } from "../server/trpc-errors.js";
import { router } from "../server/trpc.js";
import { authenticatedAs, overriding, withAuthenticate } from "./job-context.js";

const accessRouter = router({
  identify: publicProcedure.use(authenticate).mutation(({ ctx }) => (ctx as typeof ctx & { apiKey: ApiKeyRecord }).apiKey),
  charge: meteredProcedure.mutation(() => null),
});

const createCaller = (ctx: RequestContext) => accessRouter.createCaller(ctx);

async function unwrap<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw error instanceof TRPCError ? atelierErrorOf(error) : error;
  }
}

/**
 * The caller's key; 401 as for any operation when it has none or a bad one. With `operation` (a
 * procedure path such as `tools.upscale`) the key's scopes must include it, as when it is called
 * synchronously; without, any valid key may look at its own jobs.
 */
export async function identify(ctx: RequestContext, operation?: string): Promise<ApiKeyRecord> {
  // The facade's early check has already read the store for this operation's scopes.
  const early = operation === undefined ? undefined : ctx.authenticated?.get(operation);
  if (early) return early;
  const keys = withAuthenticate(ctx.services.keys, (presented) => ctx.services.keys.authenticate(presented, operation));
  return await unwrap(createCaller({ ...ctx, services: { ...ctx.services, keys } }).identify());
}

/**
 * Counts one request against the key's quota (429 when spent) and sets the rate-limit headers.
 * Usage is not recorded here: the job records it under its operation when it runs.
 */
export async function charge(ctx: RequestContext, apiKey: ApiKeyRecord): Promise<void> {
  const services = { ...ctx.services, keys: authenticatedAs(ctx.services.keys, apiKey), usage: overriding(ctx.services.usage, { record: () => undefined }) };
  // The key is already known (it may have come without an `Authorization` header: a console session call).
  await unwrap(createCaller({ ...ctx, services, authenticated: new Map([["charge", apiKey]]) }).charge());
}
