/**
 * The one place that decides where API keys live, used by the service and the keys CLI alike, so
 * `npm run keys -- create` writes where the routers read.
 */
import type { AtelierConfig } from "../../core/config.js";
import type { Logger } from "../../core/logger.js";
import type { ApiKeyStore, ApiKeyStoreOptions } from "./api-key-store.js";
import { SqliteApiKeyStore } from "./sqlite-api-key-store.js";

/** PostgreSQL when `ATELIER_DATABASE_URL` is set (several routers), else SQLite in the data folder. */
export async function openApiKeyStore(
  config: Pick<AtelierConfig, "dataDir" | "databaseUrl">,
  options: ApiKeyStoreOptions & { logger?: Logger } = {},
): Promise<ApiKeyStore> {
  // The PostgreSQL driver is loaded only where it is configured.
  if (config.databaseUrl !== undefined) return (await import("./postgres-api-key-store.js")).PostgresApiKeyStore.open(config.databaseUrl, options);
  return SqliteApiKeyStore.open(config.dataDir, options);
}
