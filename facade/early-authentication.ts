/**
 * Authentication and the quota check from the request headers alone, before the body is read: a
 * caller without a valid key, or with its quota spent, is refused without the server receiving
 * (let alone parsing) its upload. The keys found are handed to the procedure's context
 * (`authenticated`, through {@link earlyAuthenticatedKeys}), so its middleware (server/middleware)
 * counts the request without reading the key store again; tRPC callers that do not pass through
 * here are authenticated by that middleware alone. Both use the same access functions
 * (server/access/access.ts).
 */
import type { NextFunction, Request, Response } from "express";
import { asAtelierError } from "../core/errors.js";
import { METERED_OPERATIONS, type MeteredOperationId } from "../contract/operations.js";
import { authenticate, refuseWhenSpent } from "../server/access/access.js";
import type { AtelierServices } from "../server/context.js";
import type { ApiKeyRecord } from "../server/keys/api-key-store.js";
import type { SendFailure } from "./json-body.js";
import { refuseUnreadBody } from "./refuse-unread-body.js";

const METERED: ReadonlySet<string> = new Set(METERED_OPERATIONS.map((operation) => operation.id));

const isMetered = (operation: string): operation is MeteredOperationId => METERED.has(operation);

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
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.method !== "POST") return next();
    const operations = operationsOf(req).filter(isMetered);
    if (operations.length === 0) return next();
    const accepted = new Map<string, ApiKeyRecord>();
    try {
      for (const operation of operations) {
        const apiKey = earlyAuthenticatedKeys(res)?.get(operation) ?? (await authenticate(services, req.get("authorization"), operation));
        accepted.set(operation, apiKey);
        // Refused here rather than in the procedure: counted for the usage pages all the same.
        await refuseWhenSpent(services, apiKey, operation, (name, value) => res.setHeader(name, value));
      }
    } catch (error) {
      // The body is never parsed: thrown away as it arrives (refuse-unread-body.ts).
      return refuseUnreadBody(req, res, () => sendFailure(req, res, asAtelierError(error)));
    }
    (res.locals as { authenticatedKeys?: Map<string, ApiKeyRecord> }).authenticatedKeys = accepted;
    next();
  };
}
