/**
 * Who may call an operation and what it costs, as plain functions over the services: the tRPC
 * middlewares (server/middleware/), the facade's check before a body is read
 * (facade/early-authentication.ts) and the jobs (submission and runner) all call these, so a key is
 * checked, a request charged to the quota, a server failure refunded and a call counted for usage
 * the same way whichever door it came in by. The quota is charged here and refunded here only.
 */
import { AtelierError, ERROR_KINDS } from "../../core/errors.js";
import { operationById, type MeteredOperationId } from "../../contract/operations.js";
import type { AtelierServices } from "../context.js";
import type { ApiKeyRecord } from "../keys/api-key-store.js";
import { quotaChargeOf } from "../quota/quota-charge.js";
import type { QuotaBound, QuotaDecision } from "../quota/quota-store.js";
import { recordServerFailure } from "../quota/server-failures.js";

/** Where a call's rate-limit headers go (a response, or nowhere for a job running later). */
export type SetHeader = (name: string, value: string) => void;

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i;

/**
 * The key an `Authorization` header presents. With `operation` the key's scopes must allow it;
 * without, any valid key passes (a key looking at its own jobs). Throws UNAUTHORIZED for a missing,
 * malformed, unknown or revoked key, and the store's refusal for an expired key (`KEY_EXPIRED`) or
 * one whose scopes leave the operation out (`KEY_SCOPE_DENIED`).
 */
export async function authenticate(services: Pick<AtelierServices, "keys">, authorization: string | undefined, operation?: MeteredOperationId): Promise<ApiKeyRecord> {
  if (authorization === undefined || authorization.trim() === "") {
    throw new AtelierError(
      "UNAUTHORIZED",
      "Missing API key. Send it as `Authorization: Bearer <key>`; create a key in the console's API keys area (or with `npm run keys -- create --name NAME`).",
    );
  }
  const match = BEARER.exec(authorization);
  if (!match) {
    throw new AtelierError("UNAUTHORIZED", "Malformed Authorization header. Use the Bearer scheme: `Authorization: Bearer <key>`.");
  }
  const apiKey = await services.keys.authenticate(match[1]!, operation);
  if (!apiKey) {
    throw new AtelierError("UNAUTHORIZED", "The API key is not valid: it is unknown or has been revoked.");
  }
  return apiKey;
}

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

function announce(decision: QuotaDecision, setHeader: SetHeader): void {
  for (const [name, value] of Object.entries(rateLimitHeaders(decision))) setHeader(name, value);
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

/**
 * Counts one request against the key's hourly limit and, for a key a console user owns, that
 * user's allowance (server/quota/quota-charge.ts); announces the tighter budget and refuses with
 * 429 once either is spent.
 */
export async function charge(services: Pick<AtelierServices, "quota" | "accounts" | "config">, apiKey: ApiKeyRecord, setHeader: SetHeader): Promise<void> {
  const decision = await services.quota.consume(await quotaChargeOf(apiKey, services));
  announce(decision, setHeader);
  if (!decision.allowed) throw rateLimitedError(decision);
}

/**
 * Refuses with 429, without counting anything, a key whose budget is already spent: the check made
 * before a request's body is read. The request is then counted for usage as refused.
 */
export async function refuseWhenSpent(
  services: Pick<AtelierServices, "quota" | "accounts" | "config" | "usage">,
  apiKey: ApiKeyRecord,
  operation: MeteredOperationId,
  setHeader: SetHeader,
): Promise<void> {
  const decision = await services.quota.peek(await quotaChargeOf(apiKey, services));
  if (decision.remaining > 0) return;
  recordUsage(services, { apiKey, operation, status: ERROR_KINDS.RATE_LIMITED.http, durationMs: 0 });
  announce(decision, setHeader);
  throw rateLimitedError(decision);
}

/**
 * Gives a charged request back when the server, not the client, failed it (a 5xx): the key's
 * refunds per window are capped (ATELIER_QUOTA_MAX_REFUNDS), so a failure that buys free work
 * stays charged once they are used up. Other failures stay charged.
 */
export async function refund(
  services: Pick<AtelierServices, "quota" | "accounts" | "config" | "logger">,
  apiKey: ApiKeyRecord,
  failure: AtelierError,
  setHeader: SetHeader,
  requestId: string,
): Promise<void> {
  if (ERROR_KINDS[failure.code].http < 500) return;
  const decision = await services.quota.refund(await quotaChargeOf(apiKey, services));
  announce(decision, setHeader);
  recordServerFailure(failure.code, decision.refunded !== false);
  if (decision.refunded === false) {
    services.logger.warn({ requestId, keyId: apiKey.id, code: failure.code }, "server failure charged: the key's refunds for this window are used up (ATELIER_QUOTA_MAX_REFUNDS)");
  }
}

/** Counts a call for the usage pages, under the operation's usage name: key, answer status and service time. */
export function recordUsage(
  services: Pick<AtelierServices, "usage">,
  call: { apiKey: ApiKeyRecord; operation: MeteredOperationId; status: number; durationMs: number },
): void {
  const operation = operationById(call.operation);
  const usageName = operation && "metered" in operation ? operation.metered.usageName : call.operation;
  services.usage.record({ keyId: call.apiKey.id, operation: usageName, status: call.status, durationMs: call.durationMs });
}
