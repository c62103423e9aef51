/**
 * The console's session cookie and the middlewares that need it. The cookie carries a random
 * session id; the store keeps only its hash. Flags: HttpOnly, SameSite=Lax, Path=/, and Secure
 * (with the `__Host-` name prefix, which browsers bind to the exact origin) whenever the request
 * came over TLS, as judged by express with the configured trust-proxy setting.
 */
import { parse as parseCookies, serialize as serializeCookie } from "cookie";
import type { NextFunction, Request, Response } from "express";
import type { ActiveSession } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";

const PLAIN_NAME = "atelier_session";
const SECURE_NAME = "__Host-atelier_session";
const NOTICE_NAME = "atelier_notice";

/** What {@link loadSession} leaves in `res.locals`. */
export interface ConsoleLocals {
  session: ActiveSession | null;
  /** The raw session id from the cookie, when it named a live session (for the CSRF token). */
  sessionId: string | null;
  /** A one-time message from the previous request (see {@link setNotice}). */
  notice: string | null;
}

export function consoleLocals(res: Response): ConsoleLocals {
  return res.locals as ConsoleLocals;
}

function cookiesOf(req: Request): Record<string, string | undefined> {
  const header = req.get("cookie");
  return header ? parseCookies(header) : {};
}

function appendCookie(res: Response, cookie: string): void {
  const existing = res.getHeader("Set-Cookie");
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  res.setHeader("Set-Cookie", [...list, cookie]);
}

function sessionCookie(req: Request, value: string, maxAge?: number): string {
  return serializeCookie(req.secure ? SECURE_NAME : PLAIN_NAME, value, {
    httpOnly: true,
    sameSite: "lax",
    secure: req.secure,
    path: "/",
    ...(maxAge === undefined ? {} : { maxAge }),
  });
}

/** Resolves the session cookie (if any) into `res.locals`; an unknown or expired one is cleared. */
export function loadSession(services: AtelierServices) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const locals = consoleLocals(res);
    const cookies = cookiesOf(req);
    const sessionId = cookies[req.secure ? SECURE_NAME : PLAIN_NAME];
    locals.session = null;
    locals.sessionId = null;
    locals.notice = null;
    if (sessionId) {
      const session = await services.accounts.resolveSession(sessionId);
      if (session) {
        locals.session = session;
        locals.sessionId = sessionId;
      } else {
        appendCookie(res, sessionCookie(req, "", 0));
      }
    }
    // Read here, cleared only by the page that shows it (clearNotice): a page's own background
    // requests (a job page polling its state) must not take the notice meant for the page a
    // redirect is about to load.
    const notice = cookies[NOTICE_NAME];
    if (notice && req.method === "GET") locals.notice = notice.slice(0, 300);
    next();
  };
}

/**
 * Signs `userId` in: ends the session the request came with (if any) and starts one with a new id,
 * so an id planted before sign-in (session fixation) never becomes a signed-in session.
 */
export async function beginSession(services: AtelierServices, req: Request, res: Response, userId: string): Promise<void> {
  const previous = consoleLocals(res).session;
  if (previous) await services.accounts.endSession(previous.idHash);
  const sessionId = await services.accounts.startSession(userId);
  appendCookie(res, sessionCookie(req, sessionId));
}

/** Ends the request's session in the store and clears the cookie. */
export async function endSession(services: AtelierServices, req: Request, res: Response): Promise<void> {
  const session = consoleLocals(res).session;
  if (session) await services.accounts.endSession(session.idHash);
  appendCookie(res, sessionCookie(req, "", 0));
}

function noticeCookie(req: Request, message: string, maxAge: number): string {
  return serializeCookie(NOTICE_NAME, message, { httpOnly: true, sameSite: "lax", secure: req.secure, path: "/", maxAge });
}

/** Ends the notice once a page has shown it. */
export function clearNotice(req: Request, res: Response): void {
  appendCookie(res, noticeCookie(req, "", 0));
}

/** A one-line message shown once on the next page (a cookie, so no text travels in URLs). */
export function setNotice(req: Request, res: Response, message: string): void {
  appendCookie(res, noticeCookie(req, message, 60));
}
