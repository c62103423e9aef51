/** The quota headers every metered response carries, read into one object. */

export interface RateLimitInfo {
  /** Requests allowed per window: the key's own limit, or its owner's allowance when that is tighter. */
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** When the window resets. */
  resetAt: Date;
  /** The `RateLimit-Policy` header as sent, e.g. `"hourly";q=100;w=3600`. */
  policy: string | null;
}

function integer(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

/** Null when the response is not metered (for example `GET /models`). */
export function rateLimitOf(headers: Headers): RateLimitInfo | null {
  const limit = integer(headers.get("x-ratelimit-limit"));
  const remaining = integer(headers.get("x-ratelimit-remaining"));
  const reset = integer(headers.get("x-ratelimit-reset"));
  if (limit === undefined || remaining === undefined || reset === undefined) return null;
  return { limit, remaining, resetAt: new Date(reset * 1000), policy: headers.get("ratelimit-policy") };
}
