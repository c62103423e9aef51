/**
 * Both key storages run the one behavioural table (test/support/api-key-store-contract.ts): the
 * embedded SQLite store and the PostgreSQL store against a real server started for this file.
 * Storage specifics (WAL mode and raw file contents for SQLite; concurrent migrations and several
 * processes for PostgreSQL) follow in their own suites.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { openApiKeyStore } from "../../server/keys/open-api-key-store.js";
import { POSTGRES_KEYS_TABLE, POSTGRES_SCHEMA_TABLE, PostgresApiKeyStore } from "../../server/keys/postgres-api-key-store.js";
import { DatabaseOpenError } from "../../database/postgres-pool.js";
import { SqliteApiKeyStore } from "../../server/keys/sqlite-api-key-store.js";
import { DATABASE_FILE_NAME } from "../../database/sqlite-migrations.js";
import { STORE_UNAVAILABLE_CODE, STORE_UNAVAILABLE_RETRY_SECONDS } from "../../database/store-unavailable.js";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";
import { freeLoopbackPort } from "../support/free-port.js";
import { apiKeyStoreContract, type ApiKeyBackend } from "../support/api-key-store-contract.js";


// ---------------------------------------------------------------------------------------------
// SQLite

let dataDir: string;

function sqlite<T>(use: (db: Database.Database) => T, readonly = true): T {
  const db = new Database(path.join(dataDir, DATABASE_FILE_NAME), { readonly });
  try {
    return use(db);
  } finally {
    db.close();
  }
}

const sqliteBackend: ApiKeyBackend = {
  name: "SqliteApiKeyStore",
  skip: false,
  fresh: async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-keys-"));
  },
  discard: async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  },
  open: async (now) => SqliteApiKeyStore.open(dataDir, now ? { now } : {}),
  rawRows: async () => sqlite((db) => db.prepare("SELECT * FROM api_keys").all() as Array<Record<string, unknown>>),
  schemaVersion: async () =>
    sqlite((db) => (db.prepare("SELECT version FROM schema_versions WHERE component = 'api_keys'").get() as { version: number } | undefined)?.version),
  setSchemaVersion: async (version) =>
    void sqlite((db) => db.prepare("UPDATE schema_versions SET version = ? WHERE component = 'api_keys'").run(version), false),
};

// ---------------------------------------------------------------------------------------------
// PostgreSQL

const SKIP_POSTGRES = skipWithoutPostgres("keys/api-key-store.test PostgreSQL");
let postgres: PostgresServer;
let databaseUrl: string;

async function psql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const postgresBackend: ApiKeyBackend = {
  name: "PostgresApiKeyStore",
  skip: SKIP_POSTGRES,
  // One server for the whole file (started below); each test gets a database of its own.
  fresh: async () => {
    databaseUrl = await postgres.createDatabase();
  },
  discard: async () => {},
  open: async (now) => PostgresApiKeyStore.open(databaseUrl, now ? { now } : {}),
  rawRows: async () => psql(`SELECT * FROM ${POSTGRES_KEYS_TABLE}`),
  schemaVersion: async () =>
    (await psql<{ version: number }>(`SELECT version FROM ${POSTGRES_SCHEMA_TABLE} WHERE component = 'api_keys'`))[0]?.version,
  setSchemaVersion: async (version) => {
    await psql(`UPDATE ${POSTGRES_SCHEMA_TABLE} SET version = $1 WHERE component = 'api_keys'`, [version]);
  },
};

beforeAll(async () => {
  if (SKIP_POSTGRES) return;
  postgres = await startPostgresServer();
  console.info(`[keys/api-key-store.test] PostgreSQL ready in ${postgres.startupMs} ms (initdb + start-up)`);
});
afterAll(async () => {
  await postgres?.dispose();
});

// ---------------------------------------------------------------------------------------------
// The shared behavioural table

apiKeyStoreContract(sqliteBackend);
apiKeyStoreContract(postgresBackend);

// ---------------------------------------------------------------------------------------------
// SQLite specifics

describe("SqliteApiKeyStore files", () => {
  let store: SqliteApiKeyStore;
  beforeEach(async () => {
    await sqliteBackend.fresh();
    store = SqliteApiKeyStore.open(dataDir);
  });
  afterEach(async () => {
    await store.close();
    await sqliteBackend.discard();
  });

  it("leaves no copy of the key or its secret in any file, the WAL included", async () => {
    const { key } = await store.create({ name: "secretive" });
    const secret = key.split("_").slice(2).join("_");
    await store.close();
    for (const file of fs.readdirSync(dataDir)) {
      const bytes = fs.readFileSync(path.join(dataDir, file));
      expect(bytes.includes(key), file).toBe(false);
      expect(bytes.includes(secret), file).toBe(false);
      expect(bytes.includes(Buffer.from(secret, "base64url")), file).toBe(false);
    }
  });

  it("runs in WAL mode", async () => {
    await store.create({ name: "n" });
    expect(sqlite((db) => db.pragma("journal_mode", { simple: true }))).toBe("wal");
  });

  it("creates a missing data folder", async () => {
    const nested = path.join(dataDir, "a", "b");
    const other = SqliteApiKeyStore.open(nested);
    await other.create({ name: "n" });
    await other.close();
    expect(fs.existsSync(path.join(nested, DATABASE_FILE_NAME))).toBe(true);
  });

  it("is what openApiKeyStore picks without a database URL", async () => {
    const opened = await openApiKeyStore({ dataDir, databaseUrl: undefined });
    try {
      expect(opened).toBeInstanceOf(SqliteApiKeyStore);
      const { record } = await opened.create({ name: "via opener" });
      expect((await store.get(record.id))?.name).toBe("via opener");
    } finally {
      await opened.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL specifics

describe.skipIf(SKIP_POSTGRES)("PostgresApiKeyStore database", () => {
  beforeEach(() => postgresBackend.fresh());

  it("migrates a fresh database exactly once when several stores open it at once", async () => {
    const stores = await Promise.all(Array.from({ length: 6 }, () => PostgresApiKeyStore.open(databaseUrl)));
    try {
      expect(await psql(`SELECT component, version FROM ${POSTGRES_SCHEMA_TABLE}`)).toEqual([{ component: "api_keys", version: 2 }]);
      // Every store works against the one table.
      const created = await Promise.all(stores.map((s, i) => s.create({ name: `router ${i}` })));
      for (const s of stores) expect(await s.list()).toHaveLength(created.length);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it("is idempotent: reopening runs nothing and keeps the rows", async () => {
    const first = await PostgresApiKeyStore.open(databaseUrl);
    const { key } = await first.create({ name: "kept" });
    await first.close();
    for (let i = 0; i < 3; i++) {
      const again = await PostgresApiKeyStore.open(databaseUrl);
      expect((await again.authenticate(key))?.name).toBe("kept");
      await again.close();
    }
    expect(await psql(`SELECT version FROM ${POSTGRES_SCHEMA_TABLE}`)).toEqual([{ version: 2 }]);
    expect(await psql(`SELECT count(*)::int AS n FROM ${POSTGRES_KEYS_TABLE}`)).toEqual([{ n: 1 }]);
  });

  it("keeps the documented column types", async () => {
    const store = await PostgresApiKeyStore.open(databaseUrl);
    await store.close();
    const columns = await psql<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
      [POSTGRES_KEYS_TABLE],
    );
    expect(Object.fromEntries(columns.map((c) => [c.column_name, c.data_type]))).toEqual({
      id: "text",
      name: "text",
      key_hash: "bytea",
      created_at: "timestamp with time zone",
      last_used_at: "timestamp with time zone",
      hourly_limit: "integer",
      revoked_at: "timestamp with time zone",
      created_seq: "bigint",
      owner_id: "text",
      scopes: "ARRAY",
      expires_at: "timestamp with time zone",
      last_used_operation: "text",
    });
  });

  it("shares keys between stores, as between routers: created in one, revoked in another", async () => {
    const [a, b] = await Promise.all([PostgresApiKeyStore.open(databaseUrl), PostgresApiKeyStore.open(databaseUrl)]);
    try {
      const { record, key } = await a.create({ name: "shared", hourlyLimit: 9 });
      expect(await b.authenticate(key)).toMatchObject({ id: record.id, hourlyLimit: 9 });
      expect(await b.revoke(record.id)).toBe(true);
      expect(await a.authenticate(key)).toBeNull();
      expect(await a.revoke(record.id)).toBe(false);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("is what openApiKeyStore picks when a database URL is set", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-keys-"));
    const opened = await openApiKeyStore({ dataDir: dir, databaseUrl });
    try {
      expect(opened).toBeInstanceOf(PostgresApiKeyStore);
      await opened.create({ name: "in postgres" });
      expect(await psql(`SELECT name FROM ${POSTGRES_KEYS_TABLE}`)).toEqual([{ name: "in postgres" }]);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      await opened.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses to open an unreachable database with a message that names it but not its password", async () => {
    const url = `postgresql://atelier:hunter2secret@127.0.0.1:${await freeLoopbackPort()}/keys`;
    const started = Date.now();
    const failure = await PostgresApiKeyStore.open(url).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DatabaseOpenError);
    expect((failure as Error).message).toMatch(/Could not open the API key database postgresql:\/\/127\.0\.0\.1:\d+\/keys: .*ECONNREFUSED/);
    expect((failure as Error).message).not.toContain("hunter2secret");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("answers 503 while the database is down", async () => {
    // A server of its own, so stopping it leaves the shared one alone.
    const own = await startPostgresServer();
    try {
      const url = await own.createDatabase();
      const store = await PostgresApiKeyStore.open(url);
      const { key } = await store.create({ name: "outage" });
      await own.dispose();

      const failure = await store.authenticate(key).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(AtelierError);
      expect(failure).toMatchObject({
        code: STORE_UNAVAILABLE_CODE,
        httpStatus: 503,
        retryAfterSeconds: STORE_UNAVAILABLE_RETRY_SECONDS,
        message: "The API key store is unreachable, so the key cannot be checked. Retry in a few seconds.",
      });
      await store.close();
    } finally {
      await own.dispose();
    }
  });
});

