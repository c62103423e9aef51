/**
 * The one place that decides where accounts live: beside the API keys, in PostgreSQL when
 * `ATELIER_DATABASE_URL` is set, else in SQLite in the data folder. Used by the service and the
 * users CLI alike.
 */
import type { AtelierConfig } from "../../core/config.js";
import type { Logger } from "../../core/logger.js";
import { AccountStore, type AccountStoreOptions } from "./account-store.js";
import { SqliteAccountStorage } from "./sqlite-account-storage.js";

export async function openAccountStore(
  config: Pick<AtelierConfig, "dataDir" | "databaseUrl" | "console">,
  options: AccountStoreOptions & { logger?: Logger } = {},
): Promise<AccountStore> {
  // The PostgreSQL driver is loaded only where it is configured: a router without it stays lighter.
  const storage =
    config.databaseUrl !== undefined
      ? await (await import("./postgres-account-storage.js")).PostgresAccountStorage.open(config.databaseUrl, options)
      : SqliteAccountStorage.open(config.dataDir);
  return new AccountStore(storage, { idleMs: config.console.sessionIdleMs, absoluteMs: config.console.sessionAbsoluteMs }, options);
}
