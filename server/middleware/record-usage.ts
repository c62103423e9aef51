/**
 * Counts every authenticated call for the usage pages (server/access/access.ts). It sits between
 * authentication and the quota, so refusals for quota (429) are counted too.
 */
import { ERROR_KINDS } from "../../core/errors.js";
import type { MeteredOperationId } from "../../contract/operations.js";
import { recordUsage as record } from "../access/access.js";
import type { ApiKeyRecord } from "../keys/api-key-store.js";
import { atelierErrorOf } from "../trpc-errors.js";
import { middleware } from "../trpc.js";

/** Status of a call that returned normally: every operation answers 200. */
const OK_STATUS = 200;

export const recordUsage = middleware(async ({ ctx, next, path }) => {
  const { apiKey } = ctx as typeof ctx & { apiKey: ApiKeyRecord };
  const started = performance.now();
  const result = await next();
  const status = result.ok ? OK_STATUS : ERROR_KINDS[atelierErrorOf(result.error).code].http;
  record(ctx.services, { apiKey, operation: path as MeteredOperationId, status, durationMs: performance.now() - started });
  return result;
});
