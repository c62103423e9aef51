/**
 * Quota stores against real storage: the embedded SQLite file and a real redis-server started for
 * this file. Each backend is opened twice, as two router processes would, and must grant exactly
 * the limit between them. Redis outages must answer a clear 503 and recover by themselves.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { STORE_UNAVAILABLE_CODE, STORE_UNAVAILABLE_RETRY_SECONDS } from "../../database/store-unavailable.js";
import { openQuotaStore } from "../../server/quota/open-quota-store.js";
import type { QuotaCharge, QuotaDecision, QuotaStore } from "../../server/quota/quota-store.js";
import { createRedisQuotaStore, QuotaStoreOpenError, REDIS_QUOTA_KEY_PREFIX } from "../../server/quota/redis-quota-store.js";
import { createSqliteQuotaStore, QUOTA_DATABASE_FILE } from "../../server/quota/sqlite-quota-store.js";
import { freeLoopbackPort } from "../support/free-port.js";
import { skipWithoutRedis, startRedisServer, type RedisServer } from "../support/redis-server.js";

const WINDOW_SECONDS = 3600;
const SKIP_REDIS = skipWithoutRedis("quota/quota-store.test Redis");

let redis: RedisServer;
let dataDir: string;

beforeAll(async () => {
  if (!SKIP_REDIS) redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.dispose();
});
beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-quota-"));
});
afterEach(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

let keyCounter = 0;
/** A key id no other test uses (the Redis server is shared by the whole file). */
const freshKey = () => `key${++keyCounter}x${Date.now().toString(36)}`;
/** A request on a key no user owns: only the key's own limit applies. */
const keyCharge = (id: string, limit: number): QuotaCharge => ({ key: { id, limit } });

interface Backend {
  name: string;
  skip: boolean;
  /** One router's store; every call opens another over the same storage. */
  open(windowSeconds?: number, maxRefunds?: number): Promise<QuotaStore>;
}

const backends: Backend[] = [
  { name: "SQLite quota store", skip: false, open: (window = WINDOW_SECONDS, maxRefunds) => createSqliteQuotaStore(dataDir, window, maxRefunds) },
  { name: "Redis quota store", skip: SKIP_REDIS, open: (window = WINDOW_SECONDS, maxRefunds) => createRedisQuotaStore(redis.url, window, { maxRefunds }) },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(backend.name, () => {
    const opened: QuotaStore[] = [];
    const open = async (window?: number) => {
      const store = await backend.open(window);
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    it("grants exactly the limit under 200 concurrent consumes from two stores", async () => {
      const [first, second] = await Promise.all([open(), open()]);
      const key = freshKey();
      const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? first : second).consume(keyCharge(key, 50))));
      const granted = decisions.filter((decision) => decision.allowed);
      expect(granted).toHaveLength(50);
      // Each grant saw a different count: no two routers handed out the same slot.
      expect(new Set(granted.map((decision) => decision.remaining)).size).toBe(50);
      expect(Math.min(...granted.map((decision) => decision.remaining))).toBe(0);
      for (const refused of decisions.filter((decision) => !decision.allowed)) {
        expect(refused).toMatchObject({ limit: 50, remaining: 0, windowSeconds: WINDOW_SECONDS });
        expect(refused.resetSeconds).toBeGreaterThan(WINDOW_SECONDS - 60);
        expect(refused.resetSeconds).toBeLessThanOrEqual(WINDOW_SECONDS);
      }
    });

    it("gives back refunded requests, on either store", async () => {
      const [first, second] = await Promise.all([open(), open()]);
      const key = freshKey();
      for (let i = 0; i < 3; i++) expect((await first.consume(keyCharge(key, 3))).allowed).toBe(true);
      // A refused request is not counted, so it needs no refund.
      expect((await second.consume(keyCharge(key, 3))).allowed).toBe(false);
      expect(await second.refund(keyCharge(key, 3))).toMatchObject({ remaining: 1 });
      expect(await first.refund(keyCharge(key, 3))).toMatchObject({ remaining: 2 });
      expect(await second.consume(keyCharge(key, 3))).toMatchObject({ allowed: true, remaining: 1 });
      expect(await first.consume(keyCharge(key, 3))).toMatchObject({ allowed: true, remaining: 0 });
      expect((await second.consume(keyCharge(key, 3))).allowed).toBe(false);
    });

    it("keeps counters when a store is closed and opened again", async () => {
      const key = freshKey();
      const before = await open();
      for (let i = 0; i < 3; i++) await before.consume(keyCharge(key, 5));
      await before.close();
      opened.splice(opened.indexOf(before), 1);

      const after = await open();
      expect(await after.consume(keyCharge(key, 5))).toMatchObject({ allowed: true, remaining: 1 });
    });

    it("keeps keys apart and applies a changed limit to the same counter", async () => {
      const store = await open();
      const [a, b] = [freshKey(), freshKey()];
      expect((await store.consume(keyCharge(a, 1))).allowed).toBe(true);
      expect((await store.consume(keyCharge(a, 1))).allowed).toBe(false);
      expect((await store.consume(keyCharge(b, 1))).allowed).toBe(true);
      // The operator raises a's limit: the request granted still counts, the one refused never did.
      expect(await store.consume(keyCharge(a, 4))).toMatchObject({ allowed: true, remaining: 2 });
    });

    it("starts a new window when the old one has passed", async () => {
      const store = await open(1);
      const key = freshKey();
      expect((await store.consume(keyCharge(key, 1))).allowed).toBe(true);
      expect((await store.consume(keyCharge(key, 1))).allowed).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await store.consume(keyCharge(key, 1))).toMatchObject({ allowed: true, remaining: 0, windowSeconds: 1 });
    });

    it("grants exactly a shared allowance over many keys and two stores, charging refusals to no key", async () => {
      const [first, second] = await Promise.all([open(), open()]);
      const user = { id: freshKey(), limit: 30 };
      const keys = Array.from({ length: 6 }, () => ({ id: freshKey(), limit: 100 }));
      const decisions = await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 2 ? first : second).consume({ key: keys[i % 6]!, user })));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(30);
      for (const refused of decisions.filter((decision) => !decision.allowed)) {
        expect(refused).toMatchObject({ bound: "user", limit: 30, remaining: 0, user: { used: 30 } });
      }
      const keyUse = await Promise.all(keys.map((key) => first.peek({ key, user })));
      expect(keyUse.reduce((sum, decision) => sum + decision.key.used, 0)).toBe(30);
      expect(keyUse[0]).toMatchObject({ allowed: false, bound: "user", remaining: 0 });
    });

    it("reports the tighter budget, leaves the other untouched on a refusal, and refunds both", async () => {
      const store = await open();
      const user = { id: freshKey(), limit: 5 };
      const key = { id: freshKey(), limit: 2 };
      expect(await store.consume({ key, user })).toMatchObject({ allowed: true, bound: "key", limit: 2, remaining: 1, key: { used: 1 }, user: { used: 1, remaining: 4 } });
      expect(await store.consume({ key, user })).toMatchObject({ allowed: true, bound: "key", remaining: 0 });
      // The key refuses: the user's allowance is not charged for it.
      expect(await store.consume({ key, user })).toMatchObject({ allowed: false, bound: "key", remaining: 0, user: { used: 2 } });
      expect(await store.refund({ key, user })).toMatchObject({ refunded: true, key: { used: 1 }, user: { used: 1 } });
      const other = { id: freshKey(), limit: 100 };
      for (let i = 0; i < 3; i++) await store.consume({ key: other, user });
      expect(await store.consume({ key: other, user })).toMatchObject({ allowed: true, bound: "user", limit: 5, remaining: 0, key: { used: 4, remaining: 96 } });
      // The user refuses: the key is not charged for it.
      expect(await store.consume({ key: other, user })).toMatchObject({ allowed: false, bound: "user", key: { used: 4 } });
      expect(await store.consume({ key, user })).toMatchObject({ allowed: false, bound: "user", key: { used: 1 } });
    });

    it("caps refunds per key, and gives back to neither budget beyond the cap", async () => {
      const store = await backend.open(WINDOW_SECONDS, 1);
      opened.push(store);
      const user = { id: freshKey(), limit: 10 };
      const key = { id: freshKey(), limit: 10 };
      for (let i = 0; i < 3; i++) await store.consume({ key, user });
      expect(await store.refund({ key, user })).toMatchObject({ refunded: true, key: { used: 2 }, user: { used: 2 } });
      expect(await store.refund({ key, user })).toMatchObject({ refunded: false, key: { used: 2 }, user: { used: 2 } });
    });
  });
}

describe.skipIf(SKIP_REDIS)("Redis quota store specifics", () => {
  it("keeps one expiring counter per key under atelier:quota:", async () => {
    const store = await createRedisQuotaStore(redis.url, WINDOW_SECONDS);
    const client = new Redis(redis.url);
    try {
      const key = freshKey();
      await store.consume(keyCharge(key, 10));
      await store.consume(keyCharge(key, 10));
      expect(await client.get(`${REDIS_QUOTA_KEY_PREFIX}:${key}`)).toBe("2");
      const ttl = await client.ttl(`${REDIS_QUOTA_KEY_PREFIX}:${key}`);
      expect(ttl).toBeGreaterThan(WINDOW_SECONDS - 60);
      expect(ttl).toBeLessThanOrEqual(WINDOW_SECONDS);
    } finally {
      client.disconnect();
      await store.close();
    }
  });

  it("is what openQuotaStore picks when a Redis URL is set; SQLite otherwise", async () => {
    const viaRedis = await openQuotaStore({ dataDir, quota: { defaultLimit: 5, windowSeconds: 60, redisUrl: redis.url, maxRefunds: 10 } });
    const key = freshKey();
    await viaRedis.consume(keyCharge(key, 5));
    await viaRedis.close();
    expect(fs.readdirSync(dataDir)).toEqual([]);
    const client = new Redis(redis.url);
    expect(await client.get(`${REDIS_QUOTA_KEY_PREFIX}:${key}`)).toBe("1");
    client.disconnect();

    const viaSqlite = await openQuotaStore({ dataDir, quota: { defaultLimit: 5, windowSeconds: 60, redisUrl: undefined, maxRefunds: 10 } });
    await viaSqlite.consume(keyCharge(key, 5));
    await viaSqlite.close();
    expect(fs.readdirSync(dataDir)).toContain(QUOTA_DATABASE_FILE);
  });

  it("refuses to open when Redis is unreachable, quickly, naming the server but not the password", async () => {
    const url = `redis://:hunter2secret@127.0.0.1:${await freeLoopbackPort()}/0`;
    const started = Date.now();
    const failure = await createRedisQuotaStore(url, WINDOW_SECONDS).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(QuotaStoreOpenError);
    expect((failure as Error).message).toMatch(/^Could not connect to the Redis quota store redis:\/\/127\.0\.0\.1:\d+\/0: .*ECONNREFUSED/);
    expect((failure as Error).message).not.toContain("hunter2secret");
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("fails closed with a 503 while Redis is down, and recovers when it is back", async () => {
    // A server of its own, so stopping it leaves the shared one alone.
    const own = await startRedisServer();
    const store = await createRedisQuotaStore(own.url, WINDOW_SECONDS, { connectTimeoutMs: 500 });
    try {
      const key = freshKey();
      expect((await store.consume(keyCharge(key, 10))).allowed).toBe(true);
      await own.stop();

      // Several requests at once, consume and refund alike: each refused fast, none let through.
      const started = Date.now();
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 20 }, () => store.consume(keyCharge(key, 10))),
        store.refund(keyCharge(key, 10)),
      ]);
      expect(Date.now() - started).toBeLessThan(2_500);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe("rejected");
        const error = (outcome as PromiseRejectedResult).reason as AtelierError;
        expect(error).toBeInstanceOf(AtelierError);
        expect(error).toMatchObject({
          code: STORE_UNAVAILABLE_CODE,
          httpStatus: 503,
          retryAfterSeconds: STORE_UNAVAILABLE_RETRY_SECONDS,
          message: "The quota store is unreachable, so the request cannot be metered. Retry in a few seconds.",
        });
      }

      // Back (empty: nothing is persisted): ioredis reconnects by itself within its retry delay.
      await own.start();
      const deadline = Date.now() + 10_000;
      let decision: QuotaDecision | undefined;
      while (decision === undefined) {
        try {
          decision = await store.consume(keyCharge(key, 10));
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      expect(decision).toMatchObject({ allowed: true, remaining: 9 });
    } finally {
      await store.close();
      await own.dispose();
    }
  });

  it("answers 503 within the command timeout when Redis hangs", async () => {
    const own = await startRedisServer();
    const store = await createRedisQuotaStore(own.url, WINDOW_SECONDS, { commandTimeoutMs: 300 });
    try {
      const key = freshKey();
      expect((await store.consume(keyCharge(key, 10))).allowed).toBe(true);
      own.pause();
      const started = Date.now();
      await expect(store.consume(keyCharge(key, 10))).rejects.toMatchObject({ code: STORE_UNAVAILABLE_CODE, httpStatus: 503 });
      expect(Date.now() - started).toBeLessThan(1_500);
      own.resume();
      // The timed-out increment may still land when Redis wakes: failing closed can over-count, never under-count.
      const after = await store.consume(keyCharge(key, 10));
      expect(after.allowed).toBe(true);
      expect([8, 7]).toContain(after.remaining);
    } finally {
      own.resume();
      await store.close();
      await own.dispose();
    }
  });
});
