/**
 * One behavioural table for every API key storage (server/keys/api-key-store.ts over SQLite or
 * PostgreSQL): each storage runs it and must answer each case the same way. Storage specifics stay
 * beside the call, in test/keys/api-key-store.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { LAST_USED_RESOLUTION_MS, type ApiKeyStore } from "../../server/keys/api-key-store.js";

const KEY_SHAPE = /^atl_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/;

/** Replaces one character of the secret, keeping the key well-formed. */
function withWrongSecret(key: string): string {
  const last = key.at(-1) === "A" ? "B" : "A";
  return key.slice(0, -1) + last;
}

/** What the shared cases need from a storage, beyond the ApiKeyStore contract itself. */
export interface ApiKeyBackend {
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

export function apiKeyStoreContract(backend: ApiKeyBackend): void {
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
  });}
