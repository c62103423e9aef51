/**
 * Headers on every console response (pages and assets), set by helmet: a strict
 * Content-Security-Policy (scripts, styles and everything else from this origin only, no inline
 * script or style, no framing), a referrer only to this origin (page URLs say nothing to other
 * sites), nosniff, and the cross-origin isolation headers. Pages also
 * get `Cache-Control: no-store`, so a shared computer's back button shows no secret.
 */
import helmet from "helmet";
import type { NextFunction, Request, Response } from "express";

/** Directives a page may widen (e.g. `imgSrc: ["'self'", "blob:"]` for a page that previews results). */
export type CspDirectives = Record<string, string[]>;

export const BASE_CSP: CspDirectives = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
};

/** helmet with the console's policy; `extra` replaces whole directives for one page. */
export function securityHeaders(extra: CspDirectives = {}) {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { ...BASE_CSP, ...extra } },
    // same-origin, not no-referrer: with no-referrer browsers send `Origin: null` on form posts,
    // which the strict origin check must refuse.
    referrerPolicy: { policy: "same-origin" },
    crossOriginEmbedderPolicy: false,
    strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: false },
    xFrameOptions: { action: "deny" },
  });
}

export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Cache-Control", "no-store");
  next();
}
