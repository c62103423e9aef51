/** The one place that decides where quota counters live. */
import type { AtelierConfig } from "../../core/config.js";
import type { Logger } from "../../core/logger.js";
import { createSqliteQuotaStore, type QuotaStore } from "./quota-store.js";
import { createRedisQuotaStore } from "./redis-quota-store.js";

/** Redis when `ATELIER_REDIS_URL` is set (several routers share the counters), else SQLite in the data folder. */
export async function openQuotaStore(
  config: Pick<AtelierConfig, "dataDir" | "quota">,
  options: { logger?: Logger } = {},
): Promise<QuotaStore> {
  const { redisUrl, windowSeconds, maxRefunds } = config.quota;
  if (redisUrl !== undefined) return createRedisQuotaStore(redisUrl, windowSeconds, { ...options, maxRefunds });
  return createSqliteQuotaStore(config.dataDir, windowSeconds, maxRefunds);
}
