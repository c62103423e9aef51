/** The one place that decides where quota counters live. */
import type { AtelierConfig } from "../../core/config.js";
import type { Logger } from "../../core/logger.js";
import type { QuotaStore } from "./quota-store.js";
import { createSqliteQuotaStore } from "./sqlite-quota-store.js";

/** Redis when `ATELIER_REDIS_URL` is set (several routers share the counters), else SQLite in the data folder. */
export async function openQuotaStore(
  config: Pick<AtelierConfig, "dataDir" | "quota">,
  options: { logger?: Logger } = {},
): Promise<QuotaStore> {
  const { redisUrl, windowSeconds, maxRefunds } = config.quota;
  // The Redis client is loaded only where it is configured: a router without it stays lighter.
  if (redisUrl !== undefined) return (await import("./redis-quota-store.js")).createRedisQuotaStore(redisUrl, windowSeconds, { ...options, maxRefunds });
  return createSqliteQuotaStore(config.dataDir, windowSeconds, maxRefunds);
}
