/** The HTTP status and headers of a failure: the one place both HTTP adapters take them from. */
import { ERROR_KINDS, type AtelierError } from "../core/errors.js";

export function httpStatusOf(error: AtelierError): number {
  return ERROR_KINDS[error.code].http;
}

export function httpHeadersOf(error: AtelierError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers["Retry-After"] = String(Math.ceil(error.retryAfterSeconds));
  if (ERROR_KINDS[error.code].headers?.includes("WWW-Authenticate")) headers["WWW-Authenticate"] = 'Bearer realm="atelier"';
  return headers;
}
