/**
 * CSRF protection, two independent checks on every state-changing console request:
 * 1. strict origin: `Origin` (or, without it, `Referer`) must be the console's own origin
 *    (console-origin.ts: ATELIER_PUBLIC_URL, or the request's own), and a request carrying neither
 *    is refused;
 * 2. a synchronizer token for signed-in requests: derived from the session id
 *    (SHA-256 of "csrf" and the id), sent in a hidden `_csrf` field or an `X-CSRF-Token` header.
 *    It is never stored: the store keeps only a different hash of the session id, so a copy of
 *    the database yields neither.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { consoleOrigin } from "./console-origin.js";
import { html, type Html } from "./html.js";
import { consoleLocals } from "./session-cookie.js";

export const CSRF_FIELD = "_csrf";
export const CSRF_HEADER = "x-csrf-token";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function csrfTokenFor(sessionId: string): string {
  return createHash("sha256").update(`csrf\0${sessionId}`).digest("base64url");
}

function originOf(value: string | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.origin === "null" ? null : url.origin;
  } catch {
    return null;
  }
}

/** Refuses a state-changing request whose Origin (or Referer) is not the console's own; `publicOrigin`: ATELIER_PUBLIC_URL. */
export const requireSameOrigin = (publicOrigin: string | undefined): RequestHandler => (req, res, next) => {
  if (SAFE_METHODS.has(req.method)) return next();
  const origin = req.get("origin");
  const claimed = origin !== undefined ? originOf(origin) : originOf(req.get("referer"));
  const own = consoleOrigin(req, publicOrigin);
  if (claimed === null || claimed !== own) {
    // The usual misconfiguration, not an attack: TLS ends at a proxy the service was not told to trust.
    const behindProxy = claimed !== null && claimed.replace(/^https:/, "http:") === own;
    res
      .status(403)
      .type("text/plain")
      .send(
        behindProxy
          ? "Refused: the browser is on https but the service sees plain http. If a proxy terminates TLS in front of Atelier, set ATELIER_TRUST_PROXY so its X-Forwarded-Proto is believed."
          : "Refused: this request did not come from the console's own pages (cross-origin request).",
      );
    return;
  }
  next();
};

/** Refuses a signed-in state-changing request without the session's CSRF token. */
export function requireCsrfToken(req: Request, res: Response, next: NextFunction): void {
  if (SAFE_METHODS.has(req.method)) return next();
  const { sessionId } = consoleLocals(res);
  if (sessionId === null) return next(); // not signed in: pages that need a session refuse on their own
  const body = req.body as Record<string, unknown> | undefined;
  const sent = req.get(CSRF_HEADER) ?? (typeof body?.[CSRF_FIELD] === "string" ? (body[CSRF_FIELD] as string) : "");
  const expected = Buffer.from(csrfTokenFor(sessionId));
  const actual = Buffer.from(sent);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    res.status(403).type("text/plain").send("Refused: the form's security token is missing or stale. Reload the page and try again.");
    return;
  }
  next();
}

/** The hidden field every console form that changes something carries. */
export function csrfField(token: string | null): Html {
  return token === null ? html`` : html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}
