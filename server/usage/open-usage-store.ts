/** The one place that decides where usage counters live: beside the API keys. */
import type { AtelierConfig } from "../../core/config.js";
import type { Logger } from "../../core/logger.js";
import { SqliteUsageStore } from "./sqlite-usage-store.js";
import type { UsageStore } from "./usage-store.js";

/** PostgreSQL when `ATELIER_DATABASE_URL` is set (several routers add to the same buckets), else SQLite in the data folder. */
export async function openUsageStore(config: Pick<AtelierConfig, "dataDir" | "databaseUrl">, options: { logger?: Logger } = {}): Promise<UsageStore> {
  // The PostgreSQL driver is loaded only where it is configured.
  if (config.databaseUrl !== undefined) return (await import("./postgres-usage-store.js")).PostgresUsageStore.open(config.databaseUrl, options);
  return SqliteUsageStore.open(config.dataDir);
}
