/**
 * The console's page registration API. A page is one object: its path, title, optional navigation
 * entry, who may see it, and `get`/`post` handlers that return markup (wrapped in the shared
 * layout), a redirect, or a full response. Everything around the handlers is done once here:
 * session loading and access checks (403/redirect to sign-in), CSP and no-store headers, CSRF
 * (origin and token, enforced router-wide), form parsing, and error pages. See console/README.md.
 */
import express, { type NextFunction, type Request, type Response } from "express";
import { AtelierError, type FieldIssue } from "../../core/errors.js";
import type { User } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";
import { layout, type NavEntry, type NavLink } from "../pages/layout.js";

export type { NavEntry, NavLink };
import { csrfTokenFor } from "./csrf.js";
import { html, type Html } from "./html.js";
import { securityHeaders, type CspDirectives } from "./security-headers.js";
import { clearNotice, consoleLocals, setNotice } from "./session-cookie.js";

/** Who may open a page: anyone, any signed-in user, or admins only. */
export type PageAccess = "public" | "signed-in" | "admin";

/** What a handler gets. */
export interface PageRequest {
  req: Request;
  res: Response;
  services: AtelierServices;
  /** The signed-in user; never null on "signed-in" and "admin" pages. */
  user: User | null;
  /** The session's CSRF token, for {@link csrfField} in forms and the X-CSRF-Token header in scripts; null when signed out. */
  csrfToken: string | null;
  /** Route parameters (`/keys/:id` gives `params.id`). */
  params: Record<string, string>;
  /** First value of each query parameter. */
  query: Record<string, string | undefined>;
  /** First value of each submitted form field (urlencoded bodies, up to 64 KiB). */
  form: Record<string, string | undefined>;
  /** Every value of a repeated form field (checkbox groups). */
  formAll(name: string): string[];
  /** A one-time message set by the previous request's {@link redirect}. */
  notice: string | null;
}

/** A full answer: status, title override, and the page's main content. */
export interface PageResponse {
  status?: number;
  title?: string;
  main: Html;
}

export class Redirect {
  constructor(
    readonly location: string,
    readonly notice: string | undefined,
  ) {}
}

/** Redirect (303, so a POST becomes a GET) to a local path, with an optional one-time notice shown there. */
export function redirect(location: string, notice?: string): Redirect {
  if (!location.startsWith("/") || location.startsWith("//")) throw new Error(`Console redirects stay on this site: ${location}`);
  return new Redirect(location, notice);
}

export type PageResult = Html | PageResponse | Redirect;
type Handler = (page: PageRequest) => PageResult | Promise<PageResult>;


export interface PageDefinition {
  /** An express path: `/keys`, `/keys/:id`. */
  path: string;
  /** The `<title>` and the `<h1>`. */
  title: string;
  /** Present: the page is linked from the navigation (for those who may open it). */
  nav?: NavEntry;
  access: PageAccess;
  /** CSP directives this page widens, e.g. `{ imgSrc: ["'self'", "data:", "blob:"] }`. */
  csp?: CspDirectives;
  /** Extra scripts and styles from console/static or vendor assets (names for {@link assetUrl}). */
  scripts?: string[];
  styles?: string[];
  get?: Handler;
  post?: Handler;
}


const navigation = new WeakMap<express.Router, NavLink[]>();

/** The navigation links registered on `router`, in order. */
export function navigationOf(router: express.Router): NavLink[] {
  return navigation.get(router) ?? [];
}

function firstValues(source: unknown): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  if (source === null || typeof source !== "object") return result;
  for (const [name, value] of Object.entries(source)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === "string") result[name] = first;
  }
  return result;
}

/** Express middleware: the request must carry a live session; else 303 to the sign-in page. */
export function requireSession(req: Request, res: Response, next: NextFunction): void {
  if (consoleLocals(res).session) return next();
  if (req.method === "GET" || req.method === "HEAD") {
    const back = req.originalUrl.startsWith("/") && !req.originalUrl.startsWith("//") ? req.originalUrl : "/";
    res.redirect(303, `/sign-in?next=${encodeURIComponent(back)}`);
    return;
  }
  res.status(401).type("text/plain").send("Sign in first: your session has ended.");
}

/** Express middleware (after {@link requireSession}): the signed-in user must be an admin; else 403. */
export function requireAdmin(_req: Request, res: Response, next: NextFunction): void {
  if (consoleLocals(res).session?.user.role === "admin") return next();
  res.status(403).type("text/plain").send("Only administrators may open this page.");
}

/** The signed-in user, or null. */
export function currentUser(res: Response): User | null {
  return consoleLocals(res).session?.user ?? null;
}

/** The session's CSRF token, or null when signed out. */
export function csrfTokenOf(res: Response): string | null {
  const { sessionId } = consoleLocals(res);
  return sessionId === null ? null : csrfTokenFor(sessionId);
}

/** The messages of an INVALID_INPUT error by field, for forms; rethrows anything else. */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof AtelierError) || error.code !== "INVALID_INPUT") throw error;
  const errors: Record<string, string> = {};
  for (const issue of error.issues ?? ([{ path: "", message: error.message }] as FieldIssue[])) {
    errors[issue.path] = errors[issue.path] ? `${errors[issue.path]} ${issue.message}` : issue.message;
  }
  return errors;
}

function isPageResponse(result: PageResult): result is PageResponse {
  return !(result instanceof Redirect) && typeof result === "object" && "main" in result;
}

/** Registers `page` on `router` (made by createConsoleRouter, which does sessions and CSRF first). */
export function registerPage(router: express.Router, services: AtelierServices, page: PageDefinition): void {
  if (page.nav) {
    const links = navigationOf(router);
    links.push({ ...page.nav, path: page.path, adminOnly: page.access === "admin" });
    links.sort((a, b) => a.order - b.order);
    navigation.set(router, links);
  }
  const guards = page.access === "public" ? [] : page.access === "admin" ? [requireSession, requireAdmin] : [requireSession];
  const headers = securityHeaders(page.csp);

  const respond = (handler: Handler) => async (req: Request, res: Response) => {
    const locals = consoleLocals(res);
    const request: PageRequest = {
      req,
      res,
      services,
      user: locals.session?.user ?? null,
      csrfToken: csrfTokenOf(res),
      params: req.params as Record<string, string>,
      query: firstValues(req.query),
      form: firstValues(req.body),
      formAll: (name) => {
        const value = (req.body as Record<string, unknown> | undefined)?.[name];
        return (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === "string");
      },
      notice: locals.notice,
    };
    const result = await handler(request);
    if (result instanceof Redirect) {
      if (result.notice) setNotice(req, res, result.notice);
      res.redirect(303, result.location);
      return;
    }
    const response = isPageResponse(result) ? result : { main: result };
    if (request.notice) clearNotice(req, res);
    res.status(response.status ?? 200).type("html").send(
      layout({
        title: response.title ?? page.title,
        main: response.main,
        user: request.user,
        csrfToken: request.csrfToken,
        notice: request.notice,
        navigation: navigationOf(router),
        currentPath: page.path,
        scripts: page.scripts ?? [],
        styles: page.styles ?? [],
      }).markup,
    );
  };

  if (page.get) router.get(page.path, headers, ...guards, respond(page.get));
  if (page.post) router.post(page.path, headers, ...guards, respond(page.post));
}

/** An HTML error page in the console's layout (used for 404s inside the console and for failures). */
export function errorPage(res: Response, status: number, title: string, message: string): void {
  res.status(status).type("html").send(
    layout({
      title,
      main: html`<p>${message}</p><p><a href="/">Back to the console</a></p>`,
      user: currentUser(res),
      csrfToken: csrfTokenOf(res),
      notice: null,
      navigation: [],
      currentPath: "",
      scripts: [],
      styles: [],
    }).markup,
  );
}
