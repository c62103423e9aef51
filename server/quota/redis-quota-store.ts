/**
 * Quota counters in Redis, shared by every router pointed at the same server
 * (`ATELIER_REDIS_URL`): the same fixed-window scheme as the SQLite store, one key per API key
 * (`atelier:quota:<id>`, expiring with its window), incremented by one Lua script so the grant is
 * exact across processes.
 *
 * Fails closed and fast: with no offline queue, a ready check before each call and short timeouts,
 * a request arriving while Redis is unreachable is refused at once with a 503 and `Retry-After`,
 * rather than queued, waited on, or let through unmetered. ioredis keeps reconnecting meanwhile.
 */
import { Redis } from "ioredis";
import { RateLimiterRedis } from "rate-limiter-flexible";
import type { Logger } from "../../core/logger.js";
import { storeUnavailable } from "../keys/store-unavailable.js";
import { RateLimiterQuotaStore, UNBOUNDED_POINTS, type QuotaStore } from "./quota-store.js";

/** Prefix of every counter key; the API key id follows after a colon. */
export const REDIS_QUOTA_KEY_PREFIX = "atelier:quota";

export interface RedisQuotaStoreOptions {
  /** Milliseconds to wait for a TCP connection; default 2000. */
  connectTimeoutMs?: number;
  /** Milliseconds a command may take before the request gets a 503; default 2000. */
  commandTimeoutMs?: number;
  /** Where losing and regaining the connection is reported. */
  logger?: Logger;
  /** Refunds granted per key per window (default unlimited); counted under `atelier:quota-refund:`. */
  maxRefunds?: number;
}

/** The server part of a Redis URL, without user or password, for messages and logs. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    return "the configured Redis server";
  }
}

/** The Redis server could not be reached at start-up; its message is for operators. */
export class QuotaStoreOpenError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "QuotaStoreOpenError";
  }
}

/**
 * Connects to `url` (`redis://[:password@]host:6379[/db]`, or `rediss://` for TLS) and returns the
 * store. Throws {@link QuotaStoreOpenError} when Redis cannot be reached now, so a misconfigured
 * router does not start; later outages answer 503 per request instead.
 */
export async function createRedisQuotaStore(
  url: string,
  windowSeconds: number,
  options: RedisQuotaStoreOptions = {},
): Promise<QuotaStore> {
  const server = describeRedisUrl(url);
  const redis = new Redis(url, {
    lazyConnect: true,
    // Commands issued while disconnected fail at once instead of waiting in memory.
    enableOfflineQueue: false,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    commandTimeout: options.commandTimeoutMs ?? 2_000,
    // A command in flight when the connection drops fails rather than being sent again later.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
    connectionName: "atelier-quota",
  });

  // ioredis reports each failed reconnection attempt; log the transitions, not every attempt.
  let healthy = false;
  let lastError: Error | undefined;
  redis.on("error", (error: Error) => {
    lastError = error;
    if (!healthy) return;
    healthy = false;
    options.logger?.warn({ err: error, redis: server }, "Redis connection lost: requests are refused with 503 until it is back");
  });
  redis.on("ready", () => {
    if (healthy) return;
    healthy = true;
    options.logger?.info({ redis: server }, "Redis quota store connected");
  });

  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    // connect() only says "Connection is closed."; the error event carries the cause (ECONNREFUSED...).
    const reason = lastError?.message ?? (error instanceof Error ? error.message : String(error));
    throw new QuotaStoreOpenError(`Could not connect to the Redis quota store ${server}: ${reason}`, { cause: error });
  }

  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: REDIS_QUOTA_KEY_PREFIX,
    points: UNBOUNDED_POINTS,
    duration: windowSeconds,
    // Refuse at once while ioredis reconnects, instead of failing after a write attempt.
    rejectIfRedisNotReady: true,
  });
  const refundLimiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${REDIS_QUOTA_KEY_PREFIX}-refund`,
    points: UNBOUNDED_POINTS,
    duration: windowSeconds,
    rejectIfRedisNotReady: true,
  });
  return new RateLimiterQuotaStore(limiter, windowSeconds, {
    refundLimiter,
    ...(options.maxRefunds === undefined ? {} : { maxRefunds: options.maxRefunds }),
    onStoreError: (error) => storeUnavailable("quota", error),
    onClose: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  });
}
