/** The HTTP status and headers of a failure: the one place both HTTP adapters take them from. */
import { ERROR_KINDS, type AtelierError, type ErrorCode } from "../core/errors.js";

/** RFC 6750 error parameters: an expired key is an invalid token; a key outside its scopes lacks scope. */
const BEARER_CHALLENGES: Partial<Record<ErrorCode, string>> = {
  KEY_EXPIRED: 'Bearer realm="atelier", error="invalid_token"',
  KEY_SCOPE_DENIED: 'Bearer realm="atelier", error="insufficient_scope"',
};

export function httpStatusOf(error: AtelierError): number {
  return ERROR_KINDS[error.code].http;
}

export function httpHeadersOf(error: AtelierError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers["Retry-After"] = String(Math.ceil(error.retryAfterSeconds));
  if (ERROR_KINDS[error.code].headers?.includes("WWW-Authenticate")) {
    headers["WWW-Authenticate"] = BEARER_CHALLENGES[error.code] ?? 'Bearer realm="atelier"';
  }
  return headers;
}
