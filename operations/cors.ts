/**
 * Cross-origin access for browser callers, off unless ATELIER_CORS_ORIGINS lists origins (or `*`).
 * Keys travel in the Authorization header, never in cookies, so credentials are not allowed: a
 * listed origin may call the API with a key its user holds, and nothing more.
 */
import cors from "cors";
import type { RequestHandler } from "express";

export const CORS_ALLOWED_HEADERS = ["Authorization", "Content-Type", "X-Request-Id", "traceparent", "tracestate"];
export const CORS_EXPOSED_HEADERS = [
  "X-Request-Id",
  "Retry-After",
  "RateLimit",
  "RateLimit-Policy",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "traceresponse",
];

/** The CORS middleware for `origins`, or undefined when CORS is off. */
export function corsFor(origins: readonly string[]): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  return cors({
    // An array makes the library echo the request's origin only when it is listed, with `Vary: Origin`.
    origin: origins.includes("*") ? "*" : [...origins],
    methods: ["GET", "HEAD", "POST"],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
}
