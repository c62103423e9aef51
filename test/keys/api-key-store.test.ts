import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import {
  DATABASE_FILE_NAME,
  LAST_USED_RESOLUTION_MS,
  SqliteApiKeyStore,
  effectiveHourlyLimit,
} from "../../server/keys/api-key-store.js";

const KEY_SHAPE = /^atl_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/;

let dataDir: string;
let clock: number;
let store: SqliteApiKeyStore;

function openStore(): SqliteApiKeyStore {
  return SqliteApiKeyStore.open(dataDir, { now: () => clock });
}

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-keys-"));
  clock = Date.UTC(2025, 0, 1, 12, 0, 0);
  store = openStore();
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Replaces one character of the secret, keeping the key well-formed. */
function withWrongSecret(key: string): string {
  const last = key.at(-1) === "A" ? "B" : "A";
  return key.slice(0, -1) + last;
}

describe("SqliteApiKeyStore", () => {
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

  it("sets and clears a key's hourly limit", async () => {
    const { record, key } = await store.create({ name: "batch", hourlyLimit: 500 });
    expect(record.hourlyLimit).toBe(500);
    expect(effectiveHourlyLimit(record, 100)).toBe(500);

    expect((await store.setHourlyLimit(record.id, 1_000_000))?.hourlyLimit).toBe(1_000_000);
    expect((await store.authenticate(key))?.hourlyLimit).toBe(1_000_000);
    const cleared = await store.setHourlyLimit(record.id, null);
    expect(cleared?.hourlyLimit).toBeNull();
    expect(effectiveHourlyLimit(cleared!, 100)).toBe(100);
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

  it("stores only a SHA-256 hash of the key, never the key or its secret", async () => {
    const { key } = await store.create({ name: "secretive" });
    const secret = key.split("_").slice(2).join("_");
    await store.close();

    const db = new Database(path.join(dataDir, DATABASE_FILE_NAME), { readonly: true });
    const rows = db.prepare("SELECT * FROM api_keys").all() as Array<Record<string, unknown>>;
    db.close();
    expect(rows).toHaveLength(1);
    const hash = rows[0]!.key_hash;
    expect(Buffer.isBuffer(hash) && hash.length).toBe(32);
    for (const value of Object.values(rows[0]!)) {
      expect(String(value)).not.toContain(secret);
    }

    // Scan the raw files too (the WAL included, should one be left behind).
    for (const file of fs.readdirSync(dataDir)) {
      const bytes = fs.readFileSync(path.join(dataDir, file));
      expect(bytes.includes(key), file).toBe(false);
      expect(bytes.includes(secret), file).toBe(false);
      expect(bytes.includes(Buffer.from(secret, "base64url")), file).toBe(false);
    }
    store = openStore();
  });

  it("keeps keys across closing and reopening, in WAL mode", async () => {
    const { record, key } = await store.create({ name: "durable", hourlyLimit: 42 });
    await store.revoke((await store.create({ name: "gone" })).record.id);
    await store.close();

    store = openStore();
    expect(await store.get(record.id)).toEqual(record);
    expect((await store.authenticate(key))?.id).toBe(record.id);
    expect((await store.list()).map((r) => r.name)).toEqual(["durable", "gone"]);

    const db = new Database(path.join(dataDir, DATABASE_FILE_NAME), { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.prepare("SELECT version FROM schema_versions WHERE component = 'api_keys'").get()).toEqual({
      version: 1,
    });
    db.close();
  });

  it("creates a missing data folder", async () => {
    const nested = path.join(dataDir, "a", "b");
    const other = SqliteApiKeyStore.open(nested);
    await other.create({ name: "n" });
    await other.close();
    expect(fs.existsSync(path.join(nested, DATABASE_FILE_NAME))).toBe(true);
  });

  it("refuses to open a database migrated by a newer build", async () => {
    await store.close();
    const db = new Database(path.join(dataDir, DATABASE_FILE_NAME));
    db.prepare("UPDATE schema_versions SET version = 99 WHERE component = 'api_keys'").run();
    db.close();
    expect(() => openStore()).toThrow(/newer than this build/);
    fs.rmSync(path.join(dataDir, DATABASE_FILE_NAME));
    store = openStore();
  });
});
