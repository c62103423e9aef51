/**
 * The embedded key storage: table `api_keys` in `<dataDir>/atelier.db` (SQLite, WAL mode), shared
 * by the service and the keys CLI on one machine.
 */
import Database from "better-sqlite3";
import { StorageBackedApiKeyStore, type ApiKeyStorage, type ApiKeyStoreOptions, type InsertOutcome, type OwnerKeyCap, type StoredApiKey } from "./api-key-store.js";
import type { ApiKeyScope } from "./api-key-scopes.js";
import { openMigratedSqlite } from "../../database/sqlite-migrations.js";

/** The component's row in `schema_versions`; other tables in the same file keep their own rows. */
const SCHEMA_COMPONENT = "api_keys";

/**
 * Migration N (0-based) takes the api_keys schema from version N to N+1. Append, never edit: a
 * database records how many have run.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE api_keys (
     id           TEXT PRIMARY KEY,
     name         TEXT NOT NULL,
     key_hash     BLOB NOT NULL,
     created_at   INTEGER NOT NULL,
     last_used_at INTEGER,
     hourly_limit INTEGER,
     revoked_at   INTEGER
   ) STRICT`,
  // Console ownership, scopes (a JSON array; NULL: every operation), expiry, last operation.
  `ALTER TABLE api_keys ADD COLUMN owner_id TEXT;
   ALTER TABLE api_keys ADD COLUMN scopes TEXT;
   ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
   ALTER TABLE api_keys ADD COLUMN last_used_operation TEXT;
   CREATE INDEX api_keys_by_owner ON api_keys (owner_id, created_at)`,
];

interface ApiKeyRow {
  id: string;
  name: string;
  key_hash: Buffer;
  created_at: number;
  last_used_at: number | null;
  hourly_limit: number | null;
  revoked_at: number | null;
  owner_id: string | null;
  scopes: string | null;
  expires_at: number | null;
  last_used_operation: string | null;
}

function fromRow(row: ApiKeyRow): StoredApiKey {
  return {
    id: row.id,
    name: row.name,
    keyHash: row.key_hash,
    createdAtMs: row.created_at,
    lastUsedAtMs: row.last_used_at,
    hourlyLimit: row.hourly_limit,
    revokedAtMs: row.revoked_at,
    ownerId: row.owner_id,
    scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as ApiKeyScope[]),
    expiresAtMs: row.expires_at,
    lastUsedOperation: row.last_used_operation,
  };
}

function isPrimaryKeyClash(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

function prepareStatements(db: Database.Database) {
  return {
    insert: db.prepare<[string, string, Buffer, number, number | null, string | null, string | null, number | null]>(
      `INSERT INTO api_keys (id, name, key_hash, created_at, hourly_limit, owner_id, scopes, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // One statement takes the write lock before it counts, so concurrent inserts cannot both pass.
    insertWithinCap: db.prepare<[string, string, Buffer, number, number | null, string | null, string | null, number | null, string | null, number, number]>(
      `INSERT INTO api_keys (id, name, key_hash, created_at, hourly_limit, owner_id, scopes, expires_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?
       WHERE (SELECT COUNT(*) FROM api_keys WHERE owner_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)) < ?`,
    ),
    byId: db.prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE id = ?"),
    all: db.prepare<[], ApiKeyRow>("SELECT * FROM api_keys ORDER BY created_at, rowid"),
    byOwner: db.prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE owner_id = ? ORDER BY created_at, rowid"),
    // The age condition is in SQL so concurrent processes also write at most once a minute.
    touch: db.prepare<[number, string | null, string, number, string | null]>(
      `UPDATE api_keys SET last_used_at = ?, last_used_operation = ?
       WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ? OR last_used_operation IS NOT ?)`,
    ),
    rename: db.prepare<[string, string]>("UPDATE api_keys SET name = ? WHERE id = ?"),
    revoke: db.prepare<[number, string]>("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
    setLimit: db.prepare<[number | null, string]>("UPDATE api_keys SET hourly_limit = ? WHERE id = ?"),
  };
}

/** {@link ApiKeyStorage} on one better-sqlite3 connection (synchronous calls behind async methods). */
class SqliteApiKeyStorage implements ApiKeyStorage {
  private readonly statements: ReturnType<typeof prepareStatements>;

  constructor(private readonly db: Database.Database) {
    this.statements = prepareStatements(db);
  }

  async insert(key: Omit<StoredApiKey, "lastUsedAtMs" | "revokedAtMs" | "lastUsedOperation">, ownerCap?: OwnerKeyCap): Promise<InsertOutcome> {
    try {
      const values = [key.id, key.name, key.keyHash, key.createdAtMs, key.hourlyLimit, key.ownerId, key.scopes === null ? null : JSON.stringify(key.scopes), key.expiresAtMs] as const;
      if (ownerCap === undefined) this.statements.insert.run(...values);
      else if (this.statements.insertWithinCap.run(...values, key.ownerId, ownerCap.nowMs, ownerCap.maxActive).changes === 0) return "owner-at-cap";
      return "inserted";
    } catch (error) {
      if (isPrimaryKeyClash(error)) return "id-taken";
      throw error;
    }
  }

  async get(id: string): Promise<StoredApiKey | null> {
    const row = this.statements.byId.get(id);
    return row ? fromRow(row) : null;
  }

  async list(ownerId?: string): Promise<StoredApiKey[]> {
    const rows = ownerId === undefined ? this.statements.all.all() : this.statements.byOwner.all(ownerId);
    return rows.map(fromRow);
  }

  async touch(id: string, nowMs: number, staleBeforeMs: number, operation: string | null): Promise<boolean> {
    return this.statements.touch.run(nowMs, operation, id, staleBeforeMs, operation).changes > 0;
  }

  async rename(id: string, name: string): Promise<boolean> {
    return this.statements.rename.run(name, id).changes > 0;
  }

  async revoke(id: string, nowMs: number): Promise<boolean> {
    return this.statements.revoke.run(nowMs, id).changes > 0;
  }

  async setHourlyLimit(id: string, limit: number | null): Promise<boolean> {
    return this.statements.setLimit.run(limit, id).changes > 0;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/** Options for {@link SqliteApiKeyStore.open}. */
export type SqliteApiKeyStoreOptions = ApiKeyStoreOptions;

/** {@link ApiKeyStore} in `<dataDir>/atelier.db`, an embedded SQLite database in WAL mode. */
export class SqliteApiKeyStore extends StorageBackedApiKeyStore {
  /** Opens (creating the folder and file if needed) and migrates the database in `dataDir`. */
  static open(dataDir: string, options: SqliteApiKeyStoreOptions = {}): SqliteApiKeyStore {
    return openMigratedSqlite(
      dataDir,
      { component: SCHEMA_COMPONENT, migrations: MIGRATIONS },
      (db) => new SqliteApiKeyStore(new SqliteApiKeyStorage(db), options),
    );
  }
}
