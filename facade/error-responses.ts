/**
 * How a failure looks on the REST wire: `{code, message, requestId, issues?}` with the status and
 * headers of its kind (server/http-error-meta.ts). Every REST failure, from the facade itself or
 * from a procedure, is written here and only here.
 */
import type { Response } from "express";
import { toPublicError, type AtelierError } from "../core/errors.js";
import { httpHeadersOf, httpStatusOf } from "../server/http-error-meta.js";
import { requestIdOf } from "./request-id.js";

export function sendError(res: Response, error: AtelierError): void {
  if (res.headersSent) return;
  res.status(httpStatusOf(error));
  for (const [name, value] of Object.entries(httpHeadersOf(error))) res.setHeader(name, value);
  res.json(toPublicError(error, requestIdOf(res)));
}
