/**
 * Quota counters in Redis, shared by every router pointed at the same server
 * (`ATELIER_REDIS_URL`): the same fixed windows as the SQLite store, one Redis key per counter
 * (`atelier:quota:<key id>`, `atelier:quota-user:<user id>`, `atelier:quota-refund:<key id>`), each
 * expiring with its window. Every step is one Lua script, which Redis runs with nothing else in
 * between, so a charge to a key and its owner is exact across processes.
 *
 * Fails closed and fast: with no offline queue and short timeouts, a request arriving while Redis
 * is unreachable is refused at once with a 503 and `Retry-After`, rather than queued, waited on,
 * or let through unmetered. ioredis keeps reconnecting meanwhile.
 */
import { Redis } from "ioredis";
import type { Logger } from "../../core/logger.js";
import { storeUnavailable } from "../../database/store-unavailable.js";
import { CountingQuotaStore, type CounterKind, type CounterName, type CounterStep, type QuotaCounters, type QuotaStore } from "./quota-store.js";

/** Prefix of every key's request counter; the API key id follows after a colon. */
export const REDIS_QUOTA_KEY_PREFIX = "atelier:quota";

/** The Redis key prefix of each kind of counter. */
const PREFIXES: Readonly<Record<CounterKind, string>> = {
  key: REDIS_QUOTA_KEY_PREFIX,
  user: `${REDIS_QUOTA_KEY_PREFIX}-user`,
  refund: `${REDIS_QUOTA_KEY_PREFIX}-refund`,
};

const redisKeyOf = (counter: CounterName) => `${PREFIXES[counter.kind]}:${counter.id}`;

/**
 * One {@link CounterStep}. KEYS: the counters to add to, then those to take from, then those only
 * read. ARGV: the window in milliseconds, how many to add to, how many to take from, then each
 * added counter's limit. Returns 1 or 0 (applied), then each counter's count and PTTL.
 */
const STEP_SCRIPT = `
local window = tonumber(ARGV[1])
local adds = tonumber(ARGV[2])
local takes = tonumber(ARGV[3])
local applied = 1
for i = 1, adds do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[3 + i]) then applied = 0 end
end
if applied == 1 then
  for i = 1, adds do
    redis.call('INCR', KEYS[i])
    if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], window) end
  end
  for i = adds + 1, adds + takes do
    if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
  end
end
local result = { applied }
for i = 1, #KEYS do
  result[#result + 1] = tonumber(redis.call('GET', KEYS[i]) or '0')
  result[#result + 1] = redis.call('PTTL', KEYS[i])
end
return result
`;

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

  const windowMs = windowSeconds * 1000;
  const counters: QuotaCounters = {
    step: async (change: CounterStep) => {
      const add = change.add ?? [];
      const takeBack = change.takeBack ?? [];
      const keys = [...add, ...takeBack, ...(change.read ?? [])].map(redisKeyOf);
      let reply: number[];
      try {
        reply = (await redis.eval(STEP_SCRIPT, keys.length, ...keys, windowMs, add.length, takeBack.length, ...add.map((counter) => counter.limit))) as number[];
      } catch (error) {
        throw storeUnavailable("quota", error);
      }
      const readings = keys.map((_, i) => ({ count: reply[1 + 2 * i]!, msLeft: Math.max(0, reply[2 + 2 * i]!) }));
      return { applied: reply[0] === 1, readings };
    },
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
  return new CountingQuotaStore(counters, windowSeconds, options.maxRefunds);
}
