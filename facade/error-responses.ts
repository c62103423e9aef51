/**
 * How a failure looks on the REST wire: `{code, message, requestId, issues?}` with the status and
 * headers from server/http-error-meta.ts. Errors the facade raises itself go through sendError;
 * errors from procedures arrive already formatted by the router (server/trpc.ts), but
 * trpc-to-openapi forces tRPC's own `code`, a fixed validation message and raw zod issues on top
 * of that body, so the formatted public error is lifted back out before the body is written.
 */
import type { Response } from "express";
import { isErrorCode, toPublicError, type AtelierError, type PublicError } from "../core/errors.js";
import { httpHeadersOf, httpStatusOf } from "../server/http-error-meta.js";
import { requestIdOf } from "./request-id.js";

export function sendError(res: Response, error: AtelierError): void {
  res.status(httpStatusOf(error));
  for (const [name, value] of Object.entries(httpHeadersOf(error))) res.setHeader(name, value);
  res.json(toPublicError(error, requestIdOf(res)));
}

function publicBodyOf(body: string): string | undefined {
  let parsed: { data?: Partial<PublicError> };
  try {
    parsed = JSON.parse(body) as { data?: Partial<PublicError> };
  } catch {
    return undefined;
  }
  const data = parsed.data;
  if (!data || !isErrorCode(data.code) || typeof data.message !== "string" || typeof data.requestId !== "string") return undefined;
  const publicError: PublicError = { code: data.code, message: data.message, requestId: data.requestId };
  if (Array.isArray(data.issues) && data.issues.length > 0) publicError.issues = data.issues;
  return JSON.stringify(publicError);
}

/** Makes this response write the public error body in place of the router's error envelope. */
export function writePublicErrorBodies(res: Response): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (res.statusCode >= 400 && typeof chunk === "string") {
      const body = publicBodyOf(chunk);
      if (body !== undefined) return end(body, ...rest);
    }
    return end(chunk, ...rest);
  }) as Response["end"];
}
