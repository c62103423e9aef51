/**
 * One behavioural table for every key storage: the embedded SQLite store and the PostgreSQL store
 * (against a real server started for this file) must answer each case the same way. Storage
 * specifics (WAL mode and raw file contents for SQLite; concurrent migrations and several
 * processes for PostgreSQL) follow in their own suites.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { LAST_USED_RESOLUTION_MS, type ApiKeyStore } from "../../server/keys/api-key-store.js";
import { openApiKeyStore } from "../../server/keys/open-api-key-store.js";
import { POSTGRES_KEYS_TABLE, POSTGRES_SCHEMA_TABLE, PostgresApiKeyStore } from "../../server/keys/postgres-api-key-store.js";
import { DatabaseOpenError } from "../../database/postgres-pool.js";
import { SqliteApiKeyStore } from "../../server/keys/sqlite-api-key-store.js";
import { DATABASE_FILE_NAME } from "../../database/sqlite-migrations.js";
import { STORE_UNAVAILABLE_CODE, STORE_UNAVAILABLE_RETRY_SECONDS } from "../../database/store-unavailable.js";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";
import { freeLoopbackPort } from "../support/free-port.js";

const KEY_SHAPE = /^atl_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/;

/** Replaces one character of the secret, keeping the key well-formed. */
function withWrongSecret(key: string): string {
  const last = key.at(-1) === "A" ? "B" : "A";
  return key.slice(0, -1) + last;
}

/** What the shared cases need from a storage, beyond the ApiKeyStore contract itself. */
interface Backend {
  name: string;
  skip: boolean;
  /** An empty place for the next test's keys (a data folder, a database). */
  fresh(): Promise<void>;
  discard(): Promise<void>;
  open(now?: () => number): Promise<ApiKeyStore>;
  /** Every row of the keys table, as the database returns it. */
  rawRows(): Promise<Array<Record<string, unknown>>>;
  schemaVersion(): Promise<number | undefined>;
  setSchemaVersion(version: number): Promise<void>;
}

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

const sqliteBackend: Backend = {
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

const postgresBackend: Backend = {
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

for (const backend of [sqliteBackend, postgresBackend]) {
  describe.skipIf(backend.skip)(backend.name, () => {
    let clock: number;
    let store: ApiKeyStore;
    const openStore = () => backend.open(() => clock);

    beforeEach(async () => {
      await backend.fresh();
      clock = Date.UTC(2025, 0, 1, 12, 0, 0);
      store = await openStore();
    });

    afterEach(async () => {
      await store.close();
      await backend.discard();
    });

    it("creates a key in the documented format and authenticates it", async () => {
      const { record, key } = await store.create({ name: "mobile app" });
      expect(key).toMatch(KEY_SHAPE);
      expect(key.startsWith(`atl_${record.id}_`)).toBe(true);
      expect(record).toEqual({
        id: record.id,
        name: "mobile app",
        createdAt: new Date(clock),
        lastUsedAt: null,
        hourlyLimit: null,
        revokedAt: null,
        ownerId: null,
        scopes: null,
        expiresAt: null,
        lastUsedOperation: null,
      });

      clock += 5_000;
      const authenticated = await store.authenticate(key);
      expect(authenticated).toEqual({ ...record, lastUsedAt: new Date(clock) });
    });

    it("gives every key its own id and secret", async () => {
      const created = await Promise.all(Array.from({ length: 20 }, (_, i) => store.create({ name: `k${i}` })));
      expect(new Set(created.map((c) => c.record.id)).size).toBe(20);
      expect(new Set(created.map((c) => c.key)).size).toBe(20);
    });

    it("refuses a wrong secret under a real id", async () => {
      const { key } = await store.create({ name: "victim" });
      expect(await store.authenticate(withWrongSecret(key))).toBeNull();
      const otherSecret = (await store.create({ name: "other" })).key.split("_").slice(2).join("_");
      const [, id] = key.split("_");
      expect(await store.authenticate(`atl_${id}_${otherSecret}`)).toBeNull();
    });

    it("refuses unknown and malformed keys", async () => {
      const { record, key } = await store.create({ name: "real" });
      const malformed = [
        "",
        "atl_",
        "atl__",
        key.slice(0, -1), // secret one character short
        `${key}A`, // secret one character long
        key.replace("atl_", "atk_"),
        key.replace(record.id, record.id.toUpperCase()),
        key.replace(`_${record.id}_`, `_${record.id}x_`),
        ` ${key}`,
        `${key}\n`,
        `Bearer ${key}`,
        key.split("_").slice(2).join("_"),
        "x".repeat(10_000),
      ];
      for (const candidate of malformed) {
        expect(await store.authenticate(candidate), JSON.stringify(candidate.slice(0, 80))).toBeNull();
      }
      expect(await store.authenticate(key.replace(record.id, "aaaaaaaaaaaa"))).toBeNull();
      expect(await store.authenticate(undefined as unknown as string)).toBeNull();
      // The refusals touched nothing.
      expect((await store.get(record.id))?.lastUsedAt).toBeNull();
    });

    it("refuses a revoked key and reports revocation once", async () => {
      const { record, key } = await store.create({ name: "leaked" });
      expect(await store.authenticate(key)).not.toBeNull();
      clock += 1_000;
      expect(await store.revoke(record.id)).toBe(true);
      expect(await store.revoke(record.id)).toBe(false);
      expect(await store.revoke("nosuchkeyid2")).toBe(false);
      expect(await store.authenticate(key)).toBeNull();
      expect((await store.get(record.id))?.revokedAt).toEqual(new Date(clock));
    });

    it("lists every key, revoked ones included, oldest first", async () => {
      expect(await store.list()).toEqual([]);
      const first = await store.create({ name: "first", hourlyLimit: 10 });
      clock += 1;
      const second = await store.create({ name: "second" });
      await store.revoke(first.record.id);

      const listed = await store.list();
      expect(listed.map((r) => [r.id, r.name, r.hourlyLimit, r.revokedAt !== null])).toEqual([
        [first.record.id, "first", 10, true],
        [second.record.id, "second", null, false],
      ]);
      expect(await store.get(second.record.id)).toEqual(second.record);
      expect(await store.get("nosuchkeyid2")).toBeNull();
    });

    it("lists keys created in the same millisecond in creation order", async () => {
      const names = Array.from({ length: 8 }, (_, i) => `same-ms-${i}`);
      for (const name of names) await store.create({ name });
      expect((await store.list()).map((r) => r.name)).toEqual(names);
    });

    it("sets and clears a key's hourly limit", async () => {
      const { record, key } = await store.create({ name: "batch", hourlyLimit: 500 });
      expect(record.hourlyLimit).toBe(500);

      expect((await store.setHourlyLimit(record.id, 1_000_000))?.hourlyLimit).toBe(1_000_000);
      expect((await store.authenticate(key))?.hourlyLimit).toBe(1_000_000);
      const cleared = await store.setHourlyLimit(record.id, null);
      expect(cleared?.hourlyLimit).toBeNull();
      expect(await store.setHourlyLimit("nosuchkeyid2", 5)).toBeNull();
    });

    it("rejects bad names and limits with INVALID_INPUT", async () => {
      const bad: Array<[string, number | null | undefined]> = [
        ["", undefined],
        ["   ", undefined],
        ["x".repeat(101), undefined],
        ["tab\there", undefined],
        ["ok", 0],
        ["ok", 1_000_001],
        ["ok", 1.5],
        ["ok", Number.NaN],
      ];
      for (const [name, hourlyLimit] of bad) {
        const attempt = store.create({ name, hourlyLimit });
        await expect(attempt).rejects.toBeInstanceOf(AtelierError);
        await expect(attempt).rejects.toMatchObject({ code: "INVALID_INPUT" });
      }
      expect((await store.create({ name: "x".repeat(100), hourlyLimit: 1 })).record.name).toHaveLength(100);
      expect((await store.create({ name: "  padded  " })).record.name).toBe("padded");

      const { record } = await store.create({ name: "limited" });
      await expect(store.setHourlyLimit(record.id, 0)).rejects.toMatchObject({ code: "INVALID_INPUT" });
      await expect(store.setHourlyLimit(record.id, -3)).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(await store.list()).toHaveLength(3);
    });

    it("writes lastUsedAt at most about once a minute per key", async () => {
      const { record, key } = await store.create({ name: "hot" });
      const start = clock;
      expect((await store.authenticate(key))?.lastUsedAt).toEqual(new Date(start));

      clock = start + LAST_USED_RESOLUTION_MS - 1;
      expect((await store.authenticate(key))?.lastUsedAt).toEqual(new Date(start));
      expect((await store.get(record.id))?.lastUsedAt).toEqual(new Date(start));

      clock = start + LAST_USED_RESOLUTION_MS;
      expect((await store.authenticate(key))?.lastUsedAt).toEqual(new Date(clock));
      expect((await store.get(record.id))?.lastUsedAt).toEqual(new Date(clock));
    });

    it("throttles lastUsedAt in the database, across stores sharing it", async () => {
      // Two processes 10 ms apart authenticate fresh keys at once: both may read "never used", but
      // the database's age condition lets only one write, and both report what it holds.
      const other = await backend.open(() => clock + 10);
      try {
        for (let i = 0; i < 5; i++) {
          const { record, key } = await store.create({ name: `raced ${i}` });
          const [mine, theirs] = await Promise.all([store.authenticate(key), other.authenticate(key)]);
          const stored = (await store.get(record.id))?.lastUsedAt;
          expect([clock, clock + 10]).toContain(stored?.getTime());
          expect(mine?.lastUsedAt).toEqual(stored);
          expect(theirs?.lastUsedAt).toEqual(stored);
        }
      } finally {
        await other.close();
      }
    });

    it("stores only a SHA-256 hash of the key, never the key or its secret", async () => {
      const { key } = await store.create({ name: "secretive" });
      const secret = key.split("_").slice(2).join("_");
      const rows = await backend.rawRows();
      expect(rows).toHaveLength(1);
      const hash = rows[0]!.key_hash;
      expect(Buffer.isBuffer(hash) && hash.length).toBe(32);
      for (const value of Object.values(rows[0]!)) {
        expect(String(value)).not.toContain(secret);
        expect(Buffer.isBuffer(value) && value.includes(Buffer.from(secret, "base64url"))).toBe(false);
      }
    });

    it("keeps keys across closing and reopening", async () => {
      const { record, key } = await store.create({ name: "durable", hourlyLimit: 42 });
      await store.revoke((await store.create({ name: "gone" })).record.id);
      await store.close();

      store = await openStore();
      expect(await store.get(record.id)).toEqual(record);
      expect((await store.authenticate(key))?.id).toBe(record.id);
      expect((await store.list()).map((r) => r.name)).toEqual(["durable", "gone"]);
      expect(await backend.schemaVersion()).toBe(2);
    });

    it("keeps owner, scopes and expiry, and lists one owner's keys", async () => {
      const expiresAt = new Date(clock + 3_600_000);
      const mine = await store.create({ name: "mine", ownerId: "usr_a", scopes: ["prompt.improve", "prompt.improve"], expiresAt });
      await store.create({ name: "theirs", ownerId: "usr_b" });
      await store.create({ name: "cli" });
      expect(mine.record).toMatchObject({ ownerId: "usr_a", scopes: ["prompt.improve"], expiresAt });
      expect((await store.list({ ownerId: "usr_a" })).map((r) => r.name)).toEqual(["mine"]);
      expect((await store.list()).map((r) => r.ownerId)).toEqual(["usr_a", "usr_b", null]);
      expect(await store.get(mine.record.id)).toEqual(mine.record);
    });

    it("records the operation of the last use, and rewrites it when the operation changes", async () => {
      const { record, key } = await store.create({ name: "ops" });
      clock += 1_000;
      expect((await store.authenticate(key, "prompt.improve"))?.lastUsedOperation).toBe("prompt.improve");
      clock += 1_000; // well inside the minute: only a new operation is written
      expect(await store.authenticate(key, "tools.upscale")).toMatchObject({ lastUsedOperation: "tools.upscale", lastUsedAt: new Date(clock) });
      expect(await store.get(record.id)).toMatchObject({ lastUsedOperation: "tools.upscale", lastUsedAt: new Date(clock) });
    });

    it("refuses an operation outside the key's scopes with KEY_SCOPE_DENIED, without recording a use", async () => {
      const { record, key } = await store.create({ name: "scoped", scopes: ["prompt.improve"] });
      await expect(store.authenticate(key, "tools.upscale")).rejects.toMatchObject({ code: "KEY_SCOPE_DENIED" });
      expect((await store.get(record.id))?.lastUsedAt).toBeNull();
      expect((await store.authenticate(key, "prompt.improve"))?.id).toBe(record.id);
    });

    it("refuses an expired key with KEY_EXPIRED, and a wrong secret for it with null", async () => {
      const { key } = await store.create({ name: "short", expiresAt: new Date(clock + 60_000) });
      expect(await store.authenticate(key)).not.toBeNull();
      clock += 60_000;
      await expect(store.authenticate(key)).rejects.toMatchObject({ code: "KEY_EXPIRED", message: expect.stringMatching(/expired/) });
      expect(await store.authenticate(withWrongSecret(key))).toBeNull();
    });

    it("rejects past expiries, unknown scopes and bad names on create and rename", async () => {
      await expect(store.create({ name: "past", expiresAt: new Date(clock - 1) })).rejects.toMatchObject({ code: "INVALID_INPUT" });
      await expect(store.create({ name: "x", scopes: ["nope" as never] })).rejects.toThrow(/Unknown scope nope/);
      const { record } = await store.create({ name: "old" });
      expect((await store.rename(record.id, "  new name "))?.name).toBe("new name");
      await expect(store.rename(record.id, "")).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(await store.rename("nonexistent00", "x")).toBeNull();
    });

    it("refuses to open a database migrated by a newer build", async () => {
      await store.close();
      await backend.setSchemaVersion(99);
      await expect(openStore()).rejects.toThrow(/newer than this build/);
      await backend.setSchemaVersion(2);
      store = await openStore();
    });
  });
}

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

