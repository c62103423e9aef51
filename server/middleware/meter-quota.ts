/**
 * Counts each authenticated request against its key's hourly limit and, for a key a console user
 * owns, that user's hourly allowance (server/quota/quota-charge.ts); announces the tighter of the
 * two in response headers (IETF RateLimit draft and the common X-RateLimit-* trio), refuses with
 * 429 once either is spent, and gives the request back to both when the server (5xx), not the
 * client, failed.
 */
import { AtelierError, ERROR_KINDS } from "../../core/errors.js";
import type { ApiKeyRecord } from "../keys/api-key-store.js";
import { quotaChargeOf } from "../quota/quota-charge.js";
import type { QuotaBound, QuotaDecision } from "../quota/quota-store.js";
import { recordServerFailure } from "../quota/server-failures.js";
import { atelierErrorOf } from "../trpc-errors.js";
import { middleware } from "../trpc.js";

/** The `RateLimit-Policy` name of each budget: the key's own limit, or its owner's shared allowance. */
export const RATE_LIMIT_POLICIES: Readonly<Record<QuotaBound, string>> = { key: "hourly", user: "user-hourly" };

/** The headers of the decision's bound (tighter) budget. */
export function rateLimitHeaders(decision: QuotaDecision, nowMs = Date.now()): Record<string, string> {
  const name = RATE_LIMIT_POLICIES[decision.bound];
  return {
    "RateLimit-Policy": `"${name}";q=${decision.limit};w=${decision.windowSeconds}`,
    RateLimit: `"${name}";r=${decision.remaining};t=${decision.resetSeconds}`,
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(Math.ceil(nowMs / 1000) + decision.resetSeconds),
  };
}

/** The 429 for a refused (or, in the early check, spent) decision, naming the budget that is spent. */
export function rateLimitedError(decision: QuotaDecision): AtelierError {
  const per = decision.windowSeconds / 3600 === 1 ? "hour" : `${decision.windowSeconds} s`;
  const budget =
    decision.bound === "user"
      ? `this key's owner has an allowance of ${decision.limit} requests per ${per}, shared by all their keys`
      : `this key may make ${decision.limit} requests per ${per}`;
  return new AtelierError("RATE_LIMITED", `Rate limit exceeded: ${budget}. Retry after ${decision.resetSeconds} s.`, {
    retryAfterSeconds: decision.resetSeconds,
  });
}

export const meterQuota = middleware(async ({ ctx, next }) => {
  const { apiKey } = ctx as typeof ctx & { apiKey: ApiKeyRecord };
  const { quota } = ctx.services;
  const charge = await quotaChargeOf(apiKey, ctx.services);
  const announce = (decision: QuotaDecision) => {
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) ctx.setHeader(name, value);
  };
  const decision = await quota.consume(charge);
  announce(decision);
  if (!decision.allowed) throw rateLimitedError(decision);
  const result = await next();
  const failure = result.ok ? undefined : atelierErrorOf(result.error);
  if (failure && ERROR_KINDS[failure.code].http >= 500) {
    const refund = await quota.refund(charge);
    announce(refund);
    recordServerFailure(failure.code, refund.refunded !== false);
    if (refund.refunded === false) {
      ctx.services.logger.warn({ requestId: ctx.requestId, keyId: apiKey.id, code: failure.code }, "server failure charged: the key's refunds for this window are used up (ATELIER_QUOTA_MAX_REFUNDS)");
    }
  }
  return result;
});
