/**
 * When to retry and how long to wait: exponential backoff with jitter, or what `Retry-After` asks
 * when the server says. Pure functions, so the rules can be read (and tested) in one place.
 */

/** First backoff; doubles per attempt up to {@link MAX_BACKOFF_MS}. */
const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** A `Retry-After` longer than this is not waited for: the error is raised at once instead. */
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 60;

/**
 * Statuses worth another try: timeouts, conflicts with a request still in flight, quota and server
 * faults. Codes where another try cannot help (a model that is not installed) are excluded by code.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

const NOT_RETRYABLE_CODES = new Set(["MODEL_NOT_INSTALLED"]);

export function isRetryableCode(code: unknown): boolean {
  return !(typeof code === "string" && NOT_RETRYABLE_CODES.has(code));
}

/** `Retry-After` (delta-seconds or an HTTP date) in seconds, or undefined when absent or unreadable. */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/** Backoff for retry number `attempt` (0-based): 0.5 s, 1 s, 2 s ... up to 8 s, less up to 25% jitter. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(INITIAL_BACKOFF_MS * 2 ** attempt, MAX_BACKOFF_MS);
  return base * (1 - 0.25 * random());
}
