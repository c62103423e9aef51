/**
 * Counts every authenticated call for the usage pages: key, operation, answer status and service
 * time. It sits between authentication and the quota, so refusals for quota (429) are counted too.
 * Recording is an in-memory increment; the usage service writes batches (server/usage/).
 */
import { ERROR_KINDS } from "../../core/errors.js";
import type { ApiKeyRecord } from "../keys/api-key-store.js";
import { atelierErrorOf } from "../trpc-errors.js";
import { middleware } from "../trpc.js";

/** Status of a call that returned normally: every operation answers 200. */
const OK_STATUS = 200;

/** The name usage is kept under: the REST path without `/v1` (`tools/upscale`), else the tRPC path. */
export function operationName(path: string, meta: { openapi?: { path?: string } } | undefined): string {
  const restPath = meta?.openapi?.path;
  return restPath ? restPath.replace(/^\/v\d+\//, "") : path;
}

export const recordUsage = middleware(async ({ ctx, next, path, meta }) => {
  const { apiKey } = ctx as typeof ctx & { apiKey: ApiKeyRecord };
  const started = performance.now();
  const result = await next();
  const status = result.ok ? OK_STATUS : ERROR_KINDS[atelierErrorOf(result.error).code].http;
  ctx.services.usage.record({ keyId: apiKey.id, operation: operationName(path, meta), status, durationMs: performance.now() - started });
  return result;
});
