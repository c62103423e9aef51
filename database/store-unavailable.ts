/**
 * The one failure for "a shared store the router depends on cannot be reached" (Redis for quota
 * counters, PostgreSQL for API keys and accounts). The service fails closed: without the store a request can be
 * neither authenticated nor metered, so it is refused with 503 and `Retry-After`, never let through.
 */
import { AtelierError, type ErrorCode } from "../core/errors.js";

/**
 * The code clients see. None of the existing codes names this failure: `OVERLOADED` is the closest
 * in what a client should do (503, back off, retry after `Retry-After`) and is used until
 * core/errors.ts has `STORE_UNAVAILABLE`; then this line becomes `"STORE_UNAVAILABLE"`.
 */
export const STORE_UNAVAILABLE_CODE: ErrorCode = "STORE_UNAVAILABLE";

/** Seconds a client is asked to wait: about two reconnection attempts of the store clients. */
export const STORE_UNAVAILABLE_RETRY_SECONDS = 5;

/** Which store is down, as told to clients (no host names or URLs: those are for logs). */
export type SharedStore = "quota" | "api-keys" | "accounts";

const PUBLIC_MESSAGES: Record<SharedStore, string> = {
  quota: "The quota store is unreachable, so the request cannot be metered. Retry in a few seconds.",
  "api-keys": "The API key store is unreachable, so the key cannot be checked. Retry in a few seconds.",
  accounts: "The account store is unreachable. Retry in a few seconds.",
};

/** A 503 for `store`, with the driver's error kept as `cause` for logs. */
export function storeUnavailable(store: SharedStore, cause: unknown): AtelierError {
  return new AtelierError(STORE_UNAVAILABLE_CODE, PUBLIC_MESSAGES[store], {
    retryAfterSeconds: STORE_UNAVAILABLE_RETRY_SECONDS,
    cause,
  });
}
