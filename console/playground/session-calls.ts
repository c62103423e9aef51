/**
 * API calls made by the playground with the console session instead of a key secret: the page
 * names one of the signed-in user's keys by id (`X-Atelier-Key-Id`) and sends the session's CSRF
 * token (`X-CSRF-Token`); the cookie says who is calling. The console never holds a secret, so
 * this is the only way it can make a call on a key.
 *
 * This middleware only turns the session into the key record. It sits in front of the facade's
 * own early authentication (facade/early-authentication.ts), which takes the record as it takes
 * one read from `Authorization`, so the call then runs the path every API call runs: quota
 * checked from the headers, body limits, the procedure's authenticate/meter/usage middleware, a
 * job when asked. Refusals are the API's JSON errors, answered before the body is read.
 *
 * The checks are the console's own for a state-changing request (console/server/csrf.ts): the
 * request must come from the console's origin and carry the token of the session its cookie
 * names; and the key must be the user's own (never another user's, admins included), active,
 * with the operation among its scopes.
 */
import { timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { z } from "zod";
import { AtelierError } from "../../core/errors.js";
import { handAuthenticatedKey } from "../../facade/early-authentication.js";
import type { AtelierServices } from "../../server/context.js";
import { isActiveKey, type ApiKeyRecord } from "../../server/keys/api-key-store.js";
import { API_KEY_SCOPE_LABELS, isApiKeyScope } from "../../server/keys/api-key-scopes.js";
import { ownKey } from "../pages/key-owner.js";
import { consoleOrigin } from "../server/console-origin.js";
import { CSRF_HEADER, csrfTokenFor } from "../server/csrf.js";
import { consoleLocals, loadSession } from "../server/session-cookie.js";

/** The header naming the key a session call is charged to. */
export const SESSION_KEY_HEADER = "x-atelier-key-id";

const keyIdHeader = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: "Expected a key id (letters, digits, _ and -) in X-Atelier-Key-Id" });

const refused = (message: string) => new AtelierError("UNAUTHORIZED", message);

function originOf(value: string | undefined): string | null {
  return value ? (URL.parse(value)?.origin ?? null) : null;
}

function sameToken(sent: string, expected: string): boolean {
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The user's key named by `keyId`, usable for `operation`; throws the API's refusal otherwise. */
async function sessionKey(services: AtelierServices, req: Request, res: Response, keyId: string, operation: string): Promise<ApiKeyRecord> {
  const claimed = originOf(req.get("origin") ?? req.get("referer"));
  if (claimed === null || claimed !== consoleOrigin(req, services.config.console.publicOrigin)) {
    throw refused("A call made with the console session must come from the console's own pages.");
  }
  await new Promise<void>((resolve, reject) => void loadSession(services)(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
  const { session, sessionId } = consoleLocals(res);
  if (!session || sessionId === null) throw refused("Not signed in to the console (or the session ended). Sign in again, or send an API key as `Authorization: Bearer <key>`.");
  if (!sameToken(req.get(CSRF_HEADER) ?? "", csrfTokenFor(sessionId))) {
    throw refused("The console's security token is missing or stale. Reload the page and try again.");
  }
  const parsed = keyIdHeader.safeParse(keyId);
  const key = parsed.success ? await ownKey(services, session.user, parsed.data) : null;
  if (!key) throw refused("No such key among yours. Pick one of your keys on the page (API keys lists them).");
  if (!isActiveKey(key, Date.now())) throw refused(`The key ${key.name} is revoked or expired. Pick an active key, or create one on the API keys page.`);
  if (key.scopes !== null && !key.scopes.some((scope) => scope === operation)) {
    const called = isApiKeyScope(operation) ? API_KEY_SCOPE_LABELS[operation] : operation;
    throw new AtelierError("KEY_SCOPE_DENIED", `The key ${key.name} may not call ${called}; its scopes are ${key.scopes.join(", ")}. Pick a key with that scope, or one without scopes.`);
  }
  return key;
}

/**
 * Middleware for the API's POST operations: a request carrying `X-Atelier-Key-Id` is a session
 * call, checked here and handed on with its key (`handAuthenticatedKey`); any other passes
 * untouched. `operationOf` names the procedure (tRPC path) the request calls, if any.
 */
export function sessionCalls(services: AtelierServices, operationOf: (req: Request) => string | undefined, fail: (req: Request, res: Response, error: AtelierError) => void) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const keyId = req.get(SESSION_KEY_HEADER);
    const operation = operationOf(req);
    if (keyId === undefined || req.method !== "POST" || operation === undefined) return next();
    if (req.get("authorization") !== undefined) {
      return fail(req, res, new AtelierError("INVALID_INPUT", "Invalid request: send either an API key (Authorization) or a key id with the console session (X-Atelier-Key-Id), not both."));
    }
    sessionKey(services, req, res, keyId, operation).then(
      (key) => {
        handAuthenticatedKey(res, operation, key);
        next();
      },
      (error: unknown) => fail(req, res, error instanceof AtelierError ? error : new AtelierError("INTERNAL", "The session call could not be checked.", { cause: error })),
    );
  };
}
