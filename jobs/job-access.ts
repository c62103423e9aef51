/**
 * Who is calling the jobs API and what it costs: the access functions every synchronous operation
 * goes through (server/access/access.ts), with the same Bearer check, quota and rate-limit headers.
 */
import type { MeteredOperationId } from "../contract/operations.js";
import { authenticate, charge as chargeQuota } from "../server/access/access.js";
import type { RequestContext } from "../server/context.js";
import type { ApiKeyRecord } from "../server/keys/api-key-store.js";

/**
 * The caller's key; 401 as for any operation when it has none or a bad one. With `operation` the
 * key's scopes must include it, as when it is called synchronously; without, any valid key may
 * look at its own jobs. A key the facade already accepted for the operation is taken as it is.
 */
export async function identify(ctx: RequestContext, operation?: MeteredOperationId): Promise<ApiKeyRecord> {
  const early = operation === undefined ? undefined : ctx.authenticated?.get(operation);
  const apiKey = early ?? (await authenticate(ctx.services, ctx.authorization, operation));
  ctx.note?.({ keyId: apiKey.id });
  return apiKey;
}

/**
 * Counts one request against the key's quota (429 when spent) and sets the rate-limit headers.
 * Usage is not recorded here: the job records it under its operation when it runs.
 */
export async function charge(ctx: RequestContext, apiKey: ApiKeyRecord): Promise<void> {
  await chargeQuota(ctx.services, apiKey, ctx.setHeader);
}
