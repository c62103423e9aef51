/** The HTTP status and headers of a failure: the one place both HTTP adapters take them from. */
import { ERROR_KINDS, type AtelierError } from "../core/errors.js";

export function httpStatusOf(error: AtelierError): number {
  return ERROR_KINDS[error.code].http;
}

export function httpHeadersOf(error: AtelierError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers["Retry-After"] = String(Math.ceil(error.retryAfterSeconds));
  // RFC 6750: every 401 names the scheme; an expired key is an invalid token, a key outside its scopes lacks scope.
  if (error.code === "KEY_EXPIRED") headers["WWW-Authenticate"] = 'Bearer realm="atelier", error="invalid_token"';
  else if (ERROR_KINDS[error.code].http === 401) headers["WWW-Authenticate"] = 'Bearer realm="atelier"';
  if (error.code === "KEY_SCOPE_DENIED") headers["WWW-Authenticate"] = 'Bearer realm="atelier", error="insufficient_scope"';
  return headers;
}
