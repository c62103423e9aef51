/**
 * The shared key storage for several routers: table `atelier_api_keys` in a PostgreSQL database
 * (`ATELIER_DATABASE_URL`), created and migrated automatically on first use.
 *
 * Migrations are append-only; each open runs the missing ones in one transaction holding an
 * advisory lock, so routers starting at once against a fresh database migrate it exactly once.
 * Times are TIMESTAMPTZ (readable in psql), written and read at millisecond precision.
 */
import pg from "pg";
import type { Logger } from "../../core/logger.js";
import { StorageBackedApiKeyStore, type ApiKeyStorage, type ApiKeyStoreOptions, type InsertOutcome, type OwnerKeyCap, type StoredApiKey } from "./api-key-store.js";
import type { ApiKeyScope } from "./api-key-scopes.js";
import { POSTGRES_SCHEMA_TABLE } from "../../database/postgres-migrations.js";
import { isDatabaseUnreachable, openMigratedPool, queryReachable } from "../../database/postgres-pool.js";
import { storeUnavailable } from "../../database/store-unavailable.js";

/** The keys table; prefixed, since the database may be shared with other applications. */
export const POSTGRES_KEYS_TABLE = "atelier_api_keys";
export { POSTGRES_SCHEMA_TABLE };
const SCHEMA_COMPONENT = "api_keys";

/**
 * Migration N (0-based) takes the schema from version N to N+1. Append, never edit: the database
 * records how many have run. `created_seq` keeps insertion order among keys created in the same
 * millisecond (what SQLite's rowid gives the embedded store).
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE ${POSTGRES_KEYS_TABLE} (
     id           TEXT PRIMARY KEY,
     name         TEXT NOT NULL,
     key_hash     BYTEA NOT NULL CHECK (octet_length(key_hash) = 32),
     created_at   TIMESTAMPTZ NOT NULL,
     last_used_at TIMESTAMPTZ,
     hourly_limit INTEGER CHECK (hourly_limit >= 1),
     revoked_at   TIMESTAMPTZ,
     created_seq  BIGINT GENERATED ALWAYS AS IDENTITY
   )`,
  // Console ownership, scopes (NULL: every operation), expiry, last operation.
  `ALTER TABLE ${POSTGRES_KEYS_TABLE}
     ADD COLUMN owner_id TEXT,
     ADD COLUMN scopes TEXT[],
     ADD COLUMN expires_at TIMESTAMPTZ,
     ADD COLUMN last_used_operation TEXT;
   CREATE INDEX ${POSTGRES_KEYS_TABLE}_by_owner ON ${POSTGRES_KEYS_TABLE} (owner_id, created_at)`,
];

const COLUMNS = "id, name, key_hash, created_at, last_used_at, hourly_limit, revoked_at, owner_id, scopes, expires_at, last_used_operation";

interface ApiKeyRow {
  id: string;
  name: string;
  key_hash: Buffer;
  created_at: Date;
  last_used_at: Date | null;
  hourly_limit: number | null;
  revoked_at: Date | null;
  owner_id: string | null;
  scopes: string[] | null;
  expires_at: Date | null;
  last_used_operation: string | null;
}

function fromRow(row: ApiKeyRow): StoredApiKey {
  return {
    id: row.id,
    name: row.name,
    keyHash: row.key_hash,
    createdAtMs: row.created_at.getTime(),
    lastUsedAtMs: row.last_used_at?.getTime() ?? null,
    hourlyLimit: row.hourly_limit,
    revokedAtMs: row.revoked_at?.getTime() ?? null,
    ownerId: row.owner_id,
    scopes: row.scopes as ApiKeyScope[] | null,
    expiresAtMs: row.expires_at?.getTime() ?? null,
    lastUsedOperation: row.last_used_operation,
  };
}

/** {@link ApiKeyStorage} on a pg connection pool; each method is one statement, but a capped insert one transaction. */
class PostgresApiKeyStorage implements ApiKeyStorage {
  constructor(private readonly pool: pg.Pool) {}

  private query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return queryReachable<R>(this.pool, "api-keys", text, values);
  }

  async insert(key: Omit<StoredApiKey, "lastUsedAtMs" | "revokedAtMs" | "lastUsedOperation">, ownerCap?: OwnerKeyCap): Promise<InsertOutcome> {
    // DO NOTHING covers only the id; any other constraint still fails loudly.
    const insert = `INSERT INTO ${POSTGRES_KEYS_TABLE} (id, name, key_hash, created_at, hourly_limit, owner_id, scopes, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`;
    const values = [key.id, key.name, key.keyHash, new Date(key.createdAtMs), key.hourlyLimit, key.ownerId, key.scopes, key.expiresAtMs === null ? null : new Date(key.expiresAtMs)];
    if (ownerCap === undefined || key.ownerId === null) return (await this.query(insert, values)).rowCount === 1 ? "inserted" : "id-taken";
    return this.insertWithinCap(insert, values, key.ownerId, ownerCap);
  }

  /**
   * The count and the insert in one transaction holding a lock on the owner: under READ COMMITTED
   * two routers could otherwise both count below the cap and both insert.
   */
  private async insertWithinCap(insert: string, values: unknown[], ownerId: string, cap: OwnerKeyCap): Promise<InsertOutcome> {
    let client: pg.PoolClient | undefined;
    let failure: unknown;
    try {
      client = await this.pool.connect();
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`atelier-key-owner:${ownerId}`]);
      const { rows } = await client.query<{ active: number }>(
        `SELECT count(*)::int AS active FROM ${POSTGRES_KEYS_TABLE}
         WHERE owner_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
        [ownerId, new Date(cap.nowMs)],
      );
      const outcome: InsertOutcome = rows[0]!.active >= cap.maxActive ? "owner-at-cap" : (await client.query(insert, values)).rowCount === 1 ? "inserted" : "id-taken";
      await client.query("COMMIT");
      return outcome;
    } catch (error) {
      failure = error;
      await client?.query("ROLLBACK").catch(() => undefined);
      if (isDatabaseUnreachable(error)) throw storeUnavailable("api-keys", error);
      throw error;
    } finally {
      // A connection that failed mid-transaction is dropped rather than handed to the next query.
      client?.release(failure !== undefined);
    }
  }

  async get(id: string): Promise<StoredApiKey | null> {
    const { rows } = await this.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM ${POSTGRES_KEYS_TABLE} WHERE id = $1`, [id]);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  async list(ownerId?: string): Promise<StoredApiKey[]> {
    const { rows } =
      ownerId === undefined
        ? await this.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM ${POSTGRES_KEYS_TABLE} ORDER BY created_at, created_seq`, [])
        : await this.query<ApiKeyRow>(
            `SELECT ${COLUMNS} FROM ${POSTGRES_KEYS_TABLE} WHERE owner_id = $1 ORDER BY created_at, created_seq`,
            [ownerId],
          );
    return rows.map(fromRow);
  }

  async touch(id: string, nowMs: number, staleBeforeMs: number, operation: string | null): Promise<boolean> {
    // The age condition is in SQL so several routers also write at most once a minute.
    const { rowCount } = await this.query(
      `UPDATE ${POSTGRES_KEYS_TABLE} SET last_used_at = $1, last_used_operation = $4
       WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3 OR last_used_operation IS DISTINCT FROM $4)`,
      [new Date(nowMs), id, new Date(staleBeforeMs), operation],
    );
    return rowCount === 1;
  }

  async rename(id: string, name: string): Promise<boolean> {
    const { rowCount } = await this.query(`UPDATE ${POSTGRES_KEYS_TABLE} SET name = $1 WHERE id = $2`, [name, id]);
    return rowCount === 1;
  }

  async revoke(id: string, nowMs: number): Promise<boolean> {
    const { rowCount } = await this.query(
      `UPDATE ${POSTGRES_KEYS_TABLE} SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`,
      [new Date(nowMs), id],
    );
    return rowCount === 1;
  }

  async setHourlyLimit(id: string, limit: number | null): Promise<boolean> {
    const { rowCount } = await this.query(`UPDATE ${POSTGRES_KEYS_TABLE} SET hourly_limit = $1 WHERE id = $2`, [limit, id]);
    return rowCount === 1;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Options for {@link PostgresApiKeyStore.open}. */
export interface PostgresApiKeyStoreOptions extends ApiKeyStoreOptions {
  /** Connections this process keeps at most; default 10. */
  maxConnections?: number;
  /** Milliseconds to wait for a connection before answering 503; default 5000. */
  connectTimeoutMs?: number;
  /** Where dropped idle connections are reported; without it they are ignored (the pool replaces them). */
  logger?: Logger;
}

/** {@link ApiKeyStore} in PostgreSQL, shared by every router pointed at the same database. */
export class PostgresApiKeyStore extends StorageBackedApiKeyStore {
  /**
   * Connects to `url` (`postgresql://user:password@host:5432/database`), creates or migrates the
   * tables, and returns the store. Throws {@link openMigratedPool}'s DatabaseOpenError naming the
   * database (never its password) when it cannot be reached or migrated: that stops start-up.
   */
  static async open(url: string, options: PostgresApiKeyStoreOptions = {}): Promise<PostgresApiKeyStore> {
    const pool = await openMigratedPool(url, {
      component: SCHEMA_COMPONENT,
      migrations: MIGRATIONS,
      applicationName: "atelier",
      label: "API key database",
      maxConnections: options.maxConnections ?? 10,
      connectTimeoutMs: options.connectTimeoutMs,
      // A statement that outlives this is treated like a dropped connection (503), not waited on.
      queryTimeoutMs: 5_000,
      keepAlive: true,
      logger: options.logger,
    });
    return new PostgresApiKeyStore(new PostgresApiKeyStorage(pool), options);
  }
}
