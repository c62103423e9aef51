/**
 * Cross-origin access for browser callers, off unless ATELIER_CORS_ORIGINS lists origins (or `*`).
 * Keys travel in the Authorization header, never in cookies, so credentials are not allowed: a
 * listed origin may call the API with a key its user holds, and nothing more. What such a page may
 * send and read is the API's documented headers (core/api-headers.ts), so jobs (`Prefer`,
 * `Idempotency-Key`, `Location`, ...) work from a browser as from any other client.
 */
import cors from "cors";
import type { RequestHandler } from "express";
import { API_REQUEST_HEADERS, API_RESPONSE_HEADERS } from "../core/api-headers.js";

/** Every method the API answers: DELETE cancels a job. */
const CORS_METHODS = ["GET", "HEAD", "POST", "DELETE"];

/**
 * The CORS middleware for `origins`, or undefined when CORS is off. `rawImageHeaders`: the
 * `X-Atelier-*` headers of raw image answers, named after the operations' result fields.
 */
export function corsFor(origins: readonly string[], rawImageHeaders: readonly string[] = []): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  return cors({
    // An array makes the library echo the request's origin only when it is listed, with `Vary: Origin`.
    origin: origins.includes("*") ? "*" : [...origins],
    methods: CORS_METHODS,
    allowedHeaders: Object.keys(API_REQUEST_HEADERS),
    exposedHeaders: [...new Set([...Object.keys(API_RESPONSE_HEADERS), ...rawImageHeaders])],
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
}
