/**
 * The web console, as one express Router mounted at `/` by facade/app.ts (when ATELIER_CONSOLE is
 * on). Order matters: the host check (console-origin.ts) and assets first (no session needed), then
 * form parsing, session loading and the two CSRF checks for every console route, then the pages
 * (console/pages/index.ts registers them).
 * Paths the console does not know fall through to the facade's JSON 404.
 */
import express, { type NextFunction, type Request, type Response } from "express";
import type { JobService } from "../../jobs/job-service.js";
import type { AtelierServices } from "../../server/context.js";
import { registerConsolePages } from "../pages/index.js";
import { serveAssets } from "./assets.js";
import { requireConsoleHost } from "./console-origin.js";
import { requireCsrfToken, requireSameOrigin } from "./csrf.js";
import { FirstAdminSetup } from "./first-admin-setup.js";
import { errorPage } from "./pages.js";
import { noStore, securityHeaders } from "./security-headers.js";
import { loadSession } from "./session-cookie.js";

/** Largest console form body; forms are small (API bodies have their own, larger limit). */
const FORM_LIMIT = "64kb";

/** Every path the console answers, so API and unknown paths skip its middleware entirely. */
function isConsolePath(path: string): boolean {
  return !path.startsWith("/api/") && path !== "/api" && !path.startsWith("/trpc");
}

/**
 * `jobs`: the router's jobs, for the Jobs pages and webhook signing secrets; absent, those are left
 * out. `setup`: the first-administrator link the start banner prints (a fresh one, printed nowhere, when absent).
 */
export function createConsoleRouter(services: AtelierServices, jobs?: JobService, setup = new FirstAdminSetup(services.accounts)): express.Router {
  const router = express.Router();
  const consoleOnly = express.Router();
  const pages = express.Router();

  router.use((req: Request, res: Response, next: NextFunction) => (isConsolePath(req.path) ? consoleOnly(req, res, next) : next()));
  const { publicOrigin } = services.config.console;
  consoleOnly.use(securityHeaders(), requireConsoleHost(publicOrigin, services.config.http.host), serveAssets(), pages);

  pages.use(noStore);
  pages.use(express.urlencoded({ extended: false, limit: FORM_LIMIT, parameterLimit: 100 }));
  pages.use(requireSameOrigin(publicOrigin));
  pages.use(loadSession(services));
  pages.use(requireCsrfToken);
  pages.get("/", (_req, res) => res.redirect(303, res.locals.session ? "/keys" : "/sign-in"));
  registerConsolePages(pages, services, jobs, setup);

  pages.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    const { type, status } = error as { type?: string; status?: unknown };
    if (type === "entity.too.large" || type === "parameters.too.many") return errorPage(res, 413, "Form too large", "The form sent was larger than the console accepts.");
    // express's router cannot decode a path parameter with a malformed %-escape (`/keys/%zz`).
    if (error instanceof URIError) return errorPage(res, 400, "Bad address", "The address could not be read. Check the link and try again.");
    // Every other failure the form parser marks as the request's own (4xx): a charset or content
    // encoding it does not take, compressed data that does not inflate, a body it cannot parse.
    if (typeof status === "number" && status >= 400 && status < 500) {
      return errorPage(res, 400, "Bad form", "The form could not be read. Reload the page and try again.");
    }
    services.logger.error({ part: "console", err: error, path: req.path, requestId: res.getHeader("x-request-id") }, "console page failed");
    errorPage(res, 500, "Something went wrong", "The console could not show this page. Try again in a moment; if it keeps happening, tell the operator.");
  });
  return router;
}
