/**
 * Authentication and the quota check from the request headers alone, before the body is read: a
 * caller without a valid key, or with its quota spent, is refused without the server receiving
 * (let alone parsing) its upload. The keys found are handed to the procedure's context
 * (`authenticated`, through {@link earlyAuthenticatedKeys}), so its middleware (server/middleware)
 * counts the request without reading the key store again; tRPC callers that do not pass through
 * here are authenticated by that middleware alone.
 */
import type { NextFunction, Request, Response } from "express";
import { asAtelierError } from "../core/errors.js";
import type { AtelierServices } from "../server/context.js";
import type { ApiKeyRecord } from "../server/keys/api-key-store.js";
import { apiKeyFromAuthorization } from "../server/middleware/authenticate.js";
import { rateLimitedError, rateLimitHeaders } from "../server/middleware/meter-quota.js";
import { operationName } from "../server/middleware/record-usage.js";
import { quotaChargeOf } from "../server/quota/quota-charge.js";
import { appRouter } from "../server/router.js";
import type { SendFailure } from "./json-body.js";
import { refuseUnreadBody } from "./refuse-unread-body.js";

interface ProcedureMeta {
  openapi?: { protect?: boolean; path?: string };
}

/** tRPC paths (`prompt.improve`) of the procedures that need a key: those marked `protect` in their OpenAPI meta. */
export function meteredProcedures(): Set<string> {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>;
  return new Set(Object.entries(procedures).filter(([, procedure]) => procedure._def.meta?.openapi?.protect === true).map(([path]) => path));
}

/** The keys earlyAuthentication accepted for this request, by operation; absent when it checked none. */
export function earlyAuthenticatedKeys(res: Response): ReadonlyMap<string, ApiKeyRecord> | undefined {
  return (res.locals as { authenticatedKeys?: Map<string, ApiKeyRecord> }).authenticatedKeys;
}

/**
 * Hands `earlyAuthentication` a key already authenticated another way for `operation` (the
 * console's session calls, console/playground/session-calls.ts): it is taken instead of reading
 * `Authorization`, and quota-checked like any other.
 */
export function handAuthenticatedKey(res: Response, operation: string, apiKey: ApiKeyRecord): void {
  (res.locals as { authenticatedKeys?: Map<string, ApiKeyRecord> }).authenticatedKeys = new Map([[operation, apiKey]]);
}

/**
 * Middleware refusing metered calls with a missing or invalid key (401) or a spent quota (429)
 * before their body is read. `operationsOf` names the procedures a request calls (several for a
 * tRPC batch); requests calling none that is metered pass untouched.
 */
export function earlyAuthentication(services: AtelierServices, operationsOf: (req: Request) => string[], sendFailure: SendFailure) {
  const metered = meteredProcedures();
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.method !== "POST") return next();
    const operations = operationsOf(req).filter((operation) => metered.has(operation));
    if (operations.length === 0) return next();
    const accepted = new Map<string, ApiKeyRecord>();
    try {
      for (const operation of operations) {
        const apiKey = earlyAuthenticatedKeys(res)?.get(operation) ?? (await apiKeyFromAuthorization(req.get("authorization"), services.keys, operation));
        accepted.set(operation, apiKey);
        const decision = await services.quota.peek(await quotaChargeOf(apiKey, services));
        if (decision.remaining <= 0) {
          // Refused here rather than in the procedure: counted for the usage pages all the same.
          services.usage.record({ keyId: apiKey.id, operation: operationName(operation, procedures[operation]?._def.meta), status: 429, durationMs: 0 });
          for (const [name, value] of Object.entries(rateLimitHeaders(decision))) res.setHeader(name, value);
          throw rateLimitedError(decision);
        }
      }
    } catch (error) {
      // The body is never parsed: thrown away as it arrives (refuse-unread-body.ts).
      return refuseUnreadBody(req, res, () => sendFailure(req, res, asAtelierError(error)));
    }
    (res.locals as { authenticatedKeys?: Map<string, ApiKeyRecord> }).authenticatedKeys = accepted;
    next();
  };
}
