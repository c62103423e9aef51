/**
 * Counts each authenticated request against its key's hourly quota, announces the quota in
 * response headers (IETF RateLimit draft and the common X-RateLimit-* trio), refuses with 429 once
 * it is spent, and gives the request back when the server (5xx), not the client, failed.
 */
import { AtelierError, ERROR_KINDS } from "../../core/errors.js";
import { effectiveHourlyLimit, type ApiKeyRecord } from "../keys/api-key-store.js";
import type { QuotaDecision } from "../quota/quota-store.js";
import { recordServerFailure } from "../quota/server-failures.js";
import { atelierErrorOf } from "../trpc-errors.js";
import { middleware } from "../trpc.js";

export function rateLimitHeaders(decision: QuotaDecision, nowMs = Date.now()): Record<string, string> {
  const policy = `"hourly";q=${decision.limit};w=${decision.windowSeconds}`;
  return {
    "RateLimit-Policy": policy,
    RateLimit: `"hourly";r=${decision.remaining};t=${decision.resetSeconds}`,
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(Math.ceil(nowMs / 1000) + decision.resetSeconds),
  };
}

/** The 429 for a key whose `limit` is spent. */
export function rateLimitedError(limit: number, decision: QuotaDecision): AtelierError {
  return new AtelierError(
    "RATE_LIMITED",
    `Rate limit exceeded: this key may make ${limit} requests per ${decision.windowSeconds / 3600 === 1 ? "hour" : `${decision.windowSeconds} s`}. Retry after ${decision.resetSeconds} s.`,
    { retryAfterSeconds: decision.resetSeconds },
  );
}

export const meterQuota = middleware(async ({ ctx, next }) => {
  const { apiKey } = ctx as typeof ctx & { apiKey: ApiKeyRecord };
  const { quota, config } = ctx.services;
  const limit = effectiveHourlyLimit(apiKey, config.quota.defaultLimit);
  const announce = (decision: QuotaDecision) => {
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) ctx.setHeader(name, value);
  };
  const decision = await quota.consume(apiKey.id, limit);
  announce(decision);
  if (!decision.allowed) throw rateLimitedError(limit, decision);
  const result = await next();
  const failure = result.ok ? undefined : atelierErrorOf(result.error);
  if (failure && ERROR_KINDS[failure.code].http >= 500) {
    const refund = await quota.refund(apiKey.id, limit);
    announce(refund);
    recordServerFailure(failure.code, refund.refunded !== false);
    if (refund.refunded === false) {
      ctx.services.logger.warn({ requestId: ctx.requestId, keyId: apiKey.id, code: failure.code }, "server failure charged: the key's refunds for this window are used up (ATELIER_QUOTA_MAX_REFUNDS)");
    }
  }
  return result;
});
