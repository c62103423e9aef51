/**
 * API keys: how they look, how they are checked, and where they are kept.
 *
 * A key reads `atl_<id>_<secret>`. The id is public (it names the key in listings, logs and the
 * CLI); the secret is 32 random bytes. Only a SHA-256 hash of the whole key is stored, so a copy of
 * the database does not let anyone call the service.
 */
import fs from "node:fs";
import path from "node:path";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import Database from "better-sqlite3";
import { AtelierError, type FieldIssue } from "../../core/errors.js";

/** One API key as the service sees it; the secret itself is never part of a record. */
export interface ApiKeyRecord {
  /** Public identifier, the `<id>` part of the key. */
  id: string;
  /** Who or what the key is for, as the operator named it. */
  name: string;
  createdAt: Date;
  /** Last successful authentication, kept to about a minute's precision; null if never used. */
  lastUsedAt: Date | null;
  /** Requests per hour for this key; null means the service default (`quota.defaultLimit`). */
  hourlyLimit: number | null;
  /** When the key was revoked; a revoked key never authenticates again. */
  revokedAt: Date | null;
}

/** What it takes to create a key. */
export interface NewApiKey {
  name: string;
  /** Omitted or null: the service default applies. */
  hourlyLimit?: number | null;
}

/** The result of {@link ApiKeyStore.create}: the only time the full key is available. */
export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The full key (`atl_<id>_<secret>`); it cannot be recovered later. */
  key: string;
}

/**
 * Where API keys live. Methods are async so a networked backend (PostgreSQL) can implement the
 * same contract as the embedded SQLite one.
 */
export interface ApiKeyStore {
  /**
   * Creates a key. Throws {@link AtelierError} `INVALID_INPUT` for a bad name or limit.
   * The returned `key` is the only copy of the secret.
   */
  create(input: NewApiKey): Promise<CreatedApiKey>;
  /**
   * The key's record when `presentedKey` is a well-formed, known, unrevoked key; otherwise null.
   * Records the use in `lastUsedAt` (at most about once a minute per key).
   */
  authenticate(presentedKey: string): Promise<ApiKeyRecord | null>;
  /** Every key, revoked ones included, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
  /** The key with this id, or null. */
  get(id: string): Promise<ApiKeyRecord | null>;
  /** Revokes the key; true when this call revoked it, false when it is unknown or already revoked. */
  revoke(id: string): Promise<boolean>;
  /**
   * Sets the key's hourly limit (null: back to the service default). Returns the updated record,
   * or null for an unknown id. Throws {@link AtelierError} `INVALID_INPUT` for a bad limit.
   */
  setHourlyLimit(id: string, limit: number | null): Promise<ApiKeyRecord | null>;
  /** Releases the store; no other method may be called afterwards. */
  close(): Promise<void>;
}

/** Longest key name, in characters. */
export const API_KEY_NAME_MAX_LENGTH = 100;
/** Largest per-key hourly limit. */
export const API_KEY_HOURLY_LIMIT_MAX = 1_000_000;
/** `lastUsedAt` is rewritten only when it is at least this old, so hot keys do not write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;
/** The database file inside the data folder, shared with other embedded tables. */
export const DATABASE_FILE_NAME = "atelier.db";

/** The hourly limit that applies to `record`, given the service default. */
export function effectiveHourlyLimit(record: Pick<ApiKeyRecord, "hourlyLimit">, defaultLimit: number): number {
  return record.hourlyLimit ?? defaultLimit;
}

// ---------------------------------------------------------------------------------------------
// Key format

const KEY_PREFIX = "atl_";
// Lowercase RFC 4648 base32: no `_` (the separator) and no look-alike case pairs, so ids survive
// being read aloud or typed from a listing.
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const ID_LENGTH = 12; // 60 bits: collisions are negligible, and create() retries on one anyway.
const SECRET_BYTES = 32;
const KEY_PATTERN = /^atl_([a-z2-7]{12})_([A-Za-z0-9_-]{43})$/;

function newKeyId(): string {
  // 256 is a multiple of 32, so masking each byte keeps every character equally likely.
  return Array.from(randomBytes(ID_LENGTH), (byte) => ID_ALPHABET[byte & 31]).join("");
}

function newKey(id: string): string {
  return `${KEY_PREFIX}${id}_${randomBytes(SECRET_BYTES).toString("base64url")}`;
}

/** The id inside a well-formed key, or null. */
function keyIdOf(presentedKey: string): string | null {
  return KEY_PATTERN.exec(presentedKey)?.[1] ?? null;
}

/**
 * SHA-256 of the whole key. A fast hash is right here, unlike for passwords: the secret carries
 * 256 random bits, so guessing it from a leaked hash is infeasible at any hash speed, and a slow
 * KDF would only add CPU cost to every authenticated request.
 */
function hashKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

// Compared against when there is no stored hash (malformed key, unknown id), so every rejection
// costs the same hash and comparison as a wrong secret.
const DECOY_HASH = hashKey(`${KEY_PREFIX}decoy`);

// ---------------------------------------------------------------------------------------------
// Validation

function validateName(name: unknown): { name: string } | { issue: FieldIssue } {
  if (typeof name !== "string") return { issue: { path: "name", message: "Name must be a string." } };
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > API_KEY_NAME_MAX_LENGTH) {
    return {
      issue: { path: "name", message: `Name must be 1 to ${API_KEY_NAME_MAX_LENGTH} characters.` },
    };
  }
  // Names are printed in terminal tables; control characters would garble or spoof them.
  if (/\p{Cc}/u.test(trimmed)) {
    return { issue: { path: "name", message: "Name must not contain control characters." } };
  }
  return { name: trimmed };
}

function limitIssue(limit: unknown, field: string): FieldIssue | null {
  if (limit === null) return null;
  if (typeof limit === "number" && Number.isInteger(limit) && limit >= 1 && limit <= API_KEY_HOURLY_LIMIT_MAX) {
    return null;
  }
  return {
    path: field,
    message: `Hourly limit must be an integer from 1 to ${API_KEY_HOURLY_LIMIT_MAX.toLocaleString("en-US")} (or unset, for the service default).`,
  };
}

function invalidInput(issues: FieldIssue[]): AtelierError {
  return new AtelierError("INVALID_INPUT", issues.map((issue) => issue.message).join(" "), { issues });
}

// ---------------------------------------------------------------------------------------------
// Schema

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
];

function migrate(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_versions (
             component TEXT PRIMARY KEY,
             version   INTEGER NOT NULL
           ) STRICT`);
  const run = db.transaction(() => {
    const row = db
      .prepare<[string], { version: number }>("SELECT version FROM schema_versions WHERE component = ?")
      .get(SCHEMA_COMPONENT);
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(
        `${SCHEMA_COMPONENT} schema is at version ${current}, newer than this build knows (${MIGRATIONS.length}); upgrade the service.`,
      );
    }
    for (const migration of MIGRATIONS.slice(current)) db.exec(migration);
    db.prepare(
      `INSERT INTO schema_versions (component, version) VALUES (?, ?)
       ON CONFLICT (component) DO UPDATE SET version = excluded.version`,
    ).run(SCHEMA_COMPONENT, MIGRATIONS.length);
  });
  // IMMEDIATE takes the write lock up front, so two processes opening a fresh file at once
  // cannot both read version 0 and both try to create the table.
  run.immediate();
}

// ---------------------------------------------------------------------------------------------
// SQLite store

interface ApiKeyRow {
  id: string;
  name: string;
  key_hash: Buffer;
  created_at: number;
  last_used_at: number | null;
  hourly_limit: number | null;
  revoked_at: number | null;
}

function toRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: new Date(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
    hourlyLimit: row.hourly_limit,
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
  };
}

function isPrimaryKeyClash(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

function prepareStatements(db: Database.Database) {
  return {
    insert: db.prepare<[string, string, Buffer, number, number | null]>(
      "INSERT INTO api_keys (id, name, key_hash, created_at, hourly_limit) VALUES (?, ?, ?, ?, ?)",
    ),
    byId: db.prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE id = ?"),
    all: db.prepare<[], ApiKeyRow>("SELECT * FROM api_keys ORDER BY created_at, rowid"),
    // The age condition is repeated in SQL so concurrent processes also write at most once a minute.
    touch: db.prepare<[number, string, number]>(
      "UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)",
    ),
    revoke: db.prepare<[number, string]>(
      "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    ),
    setLimit: db.prepare<[number | null, string]>("UPDATE api_keys SET hourly_limit = ? WHERE id = ?"),
  };
}

/** Options for {@link SqliteApiKeyStore.open}. */
export interface SqliteApiKeyStoreOptions {
  /** Milliseconds since the epoch; tests pass a fake clock. */
  now?: () => number;
}

/** {@link ApiKeyStore} in `<dataDir>/atelier.db`, an embedded SQLite database in WAL mode. */
export class SqliteApiKeyStore implements ApiKeyStore {
  private readonly now: () => number;
  private readonly statements: ReturnType<typeof prepareStatements>;

  private constructor(
    private readonly db: Database.Database,
    options: SqliteApiKeyStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.statements = prepareStatements(db);
  }

  /** Opens (creating the folder and file if needed) and migrates the database in `dataDir`. */
  static open(dataDir: string, options: SqliteApiKeyStoreOptions = {}): SqliteApiKeyStore {
    fs.mkdirSync(dataDir, { recursive: true });
    const db = new Database(path.join(dataDir, DATABASE_FILE_NAME));
    try {
      db.pragma("journal_mode = WAL");
      // The CLI and the server share the file; wait briefly for the other's write lock.
      db.pragma("busy_timeout = 5000");
      migrate(db);
      return new SqliteApiKeyStore(db, options);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  async create(input: NewApiKey): Promise<CreatedApiKey> {
    const issues: FieldIssue[] = [];
    const validName = validateName(input.name);
    if ("issue" in validName) issues.push(validName.issue);
    const hourlyLimit = input.hourlyLimit ?? null;
    const badLimit = limitIssue(hourlyLimit, "hourlyLimit");
    if (badLimit) issues.push(badLimit);
    if ("issue" in validName || badLimit) throw invalidInput(issues);

    const createdAt = this.now();
    for (let attempt = 0; ; attempt++) {
      const id = newKeyId();
      const key = newKey(id);
      try {
        this.statements.insert.run(id, validName.name, hashKey(key), createdAt, hourlyLimit);
      } catch (error) {
        if (isPrimaryKeyClash(error) && attempt < 3) continue;
        throw error;
      }
      const record: ApiKeyRecord = {
        id,
        name: validName.name,
        createdAt: new Date(createdAt),
        lastUsedAt: null,
        hourlyLimit,
        revokedAt: null,
      };
      return { record, key };
    }
  }

  async authenticate(presentedKey: string): Promise<ApiKeyRecord | null> {
    if (typeof presentedKey !== "string") return null;
    // Hash and compare on every path; only the format check (public knowledge) decides whether
    // the database is consulted, and nothing distinguishes an unknown id from a wrong secret.
    const presentedHash = hashKey(presentedKey);
    const id = keyIdOf(presentedKey);
    const row = id === null ? undefined : this.statements.byId.get(id);
    const storedHash = row && row.key_hash.length === DECOY_HASH.length ? row.key_hash : DECOY_HASH;
    const hashesMatch = timingSafeEqual(presentedHash, storedHash);
    if (!row || storedHash === DECOY_HASH || !hashesMatch || row.revoked_at !== null) return null;

    const now = this.now();
    const staleBefore = now - LAST_USED_RESOLUTION_MS;
    if (row.last_used_at === null || row.last_used_at <= staleBefore) {
      const { changes } = this.statements.touch.run(now, row.id, staleBefore);
      // Zero changes: another process touched it a moment ago; report what the table holds.
      row.last_used_at = changes > 0 ? now : (this.statements.byId.get(row.id)?.last_used_at ?? now);
    }
    return toRecord(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return this.statements.all.all().map(toRecord);
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const row = this.statements.byId.get(id);
    return row ? toRecord(row) : null;
  }

  async revoke(id: string): Promise<boolean> {
    return this.statements.revoke.run(this.now(), id).changes > 0;
  }

  async setHourlyLimit(id: string, limit: number | null): Promise<ApiKeyRecord | null> {
    const badLimit = limitIssue(limit, "hourlyLimit");
    if (badLimit) throw invalidInput([badLimit]);
    if (this.statements.setLimit.run(limit, id).changes === 0) return null;
    return this.get(id);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
