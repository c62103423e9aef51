/**
 * Listing from each job store (SQLite, and Redis on a real redis-server): one key's jobs (`list`)
 * and several keys' jobs in one newest-first sequence (`listForKeys`, the console's view of a
 * user's keys), with status filter and cursor.
 */
import fs from "node:fs";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobStore } from "../../jobs/job-store.js";
import { RedisJobStore } from "../../jobs/redis-job-store.js";
import { SqliteJobStore } from "../../jobs/sqlite-job-store.js";
import { skipWithoutRedis, startRedisServer } from "../support/redis-server.js";
import { makeDataDir } from "../support/test-service.js";

/** A fresh store and what removes it. */
type OpenStore = () => Promise<{ store: JobStore; dispose(): Promise<void> }>;

const STORES: [string, OpenStore, boolean][] = [
  [
    "SqliteJobStore",
    async () => {
      const dataDir = makeDataDir();
      const store = new SqliteJobStore(dataDir);
      return { store, dispose: async () => (await store.close(), fs.rmSync(dataDir, { recursive: true, force: true })) };
    },
    false,
  ],
  [
    "RedisJobStore",
    async () => {
      const server = await startRedisServer();
      const store = new RedisJobStore(new Redis(server.url), { deliveryLeaseMs: 1_000 });
      return { store, dispose: async () => (await store.close(), await server.dispose()) };
    },
    skipWithoutRedis("RedisJobStore listing"),
  ],
];

const LIMITS = { maxActivePerKey: 100, maxQueued: 100 };

describe.each(STORES.filter(([, , skip]) => !skip))("%s listing", (_name, open) => {
  let store: JobStore;
  let dispose: () => Promise<void>;
  // Inserted oldest first, alternating keys, with a third key that is never asked for.
  const order = ["a1", "b1", "c1", "a2", "b2", "a3", "c2", "b3"];
  const keyOf = (id: string) => `key_${id[0]}`;

  beforeAll(async () => {
    ({ store, dispose } = await open());
    for (const [n, id] of order.entries()) {
      await store.insert(
        { id, apiKeyId: keyOf(id), operation: "/v1/tools/upscale", input: {}, requestId: `req_${id}`, webhookUrl: null, createdAtMs: 1_000 + n },
        LIMITS,
      );
    }
    await store.finish("a2", { status: "succeeded", result: { ok: true } }, 2_000, 3_000);
    await store.finish("b3", { status: "succeeded", result: { ok: true } }, 2_000, 3_000);
  });
  afterAll(async () => {
    await dispose?.();
  });

  const ids = (page: { jobs: { id: string }[] }) => page.jobs.map((job) => job.id);

  it("lists the jobs of several keys newest first, leaving other keys' jobs out", async () => {
    const page = await store.listForKeys(["key_a", "key_b"], { limit: 10 });
    expect(ids(page)).toEqual(["b3", "a3", "b2", "a2", "b1", "a1"]);
    expect(page.nextCursor).toBeNull();
  });

  it("pages with the previous page's last id as cursor until nextCursor is null", async () => {
    const first = await store.listForKeys(["key_a", "key_b"], { limit: 4 });
    expect(ids(first)).toEqual(["b3", "a3", "b2", "a2"]);
    expect(first.nextCursor).toBe("a2");
    const second = await store.listForKeys(["key_a", "key_b"], { limit: 4, cursor: first.nextCursor! });
    expect(ids(second)).toEqual(["b1", "a1"]);
    expect(second.nextCursor).toBeNull();
    // Exactly full: no empty page promised.
    const exact = await store.listForKeys(["key_a", "key_b"], { limit: 3, cursor: "b2" });
    expect(ids(exact)).toEqual(["a2", "b1", "a1"]);
    expect(exact.nextCursor).toBeNull();
  });

  it("filters by status across the keys", async () => {
    expect(ids(await store.listForKeys(["key_a", "key_b"], { limit: 10, status: "succeeded" }))).toEqual(["b3", "a2"]);
    const queued = await store.listForKeys(["key_a", "key_b"], { limit: 2, status: "queued" });
    expect(ids(queued)).toEqual(["a3", "b2"]);
    expect(ids(await store.listForKeys(["key_a", "key_b"], { limit: 2, status: "queued", cursor: queued.nextCursor! }))).toEqual(["b1", "a1"]);
  });

  it("ends the listing at a cursor that belongs to none of the keys, and lists nothing for no keys", async () => {
    expect(ids(await store.listForKeys(["key_a", "key_b"], { limit: 10, cursor: "c2" }))).toEqual([]);
    expect(ids(await store.listForKeys(["key_a", "key_b"], { limit: 10, cursor: "no-such-job" }))).toEqual([]);
    expect(await store.listForKeys([], { limit: 10 })).toEqual({ jobs: [], nextCursor: null });
  });

  it("keeps list as the one-key case", async () => {
    const page = await store.list("key_a", { limit: 2 });
    expect(ids(page)).toEqual(["a3", "a2"]);
    expect(ids(await store.list("key_a", { limit: 2, cursor: page.nextCursor! }))).toEqual(["a1"]);
    expect(ids(await store.list("key_a", { limit: 10, cursor: "b2" }))).toEqual([]);
  });
});
