/**
 * How each job store (SQLite, and Redis on a real redis-server) hands out due webhook deliveries:
 * keys take turns (every key's oldest before any key's second), deliveries in flight are never
 * handed out again and count against their key, and a key never has more than the per-key limit in
 * flight. The webhook deliverer relies on this so one key's slow receivers never hold another's.
 */
import fs from "node:fs";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { DueDeliveries, JobStore, WebhookDelivery } from "../../jobs/job-store.js";
import { RedisJobStore } from "../../jobs/redis-job-store.js";
import { SqliteJobStore } from "../../jobs/sqlite-job-store.js";
import { startRedisServer } from "../support/redis-server.js";
import { makeDataDir } from "../support/test-service.js";

interface OpenStore {
  store: JobStore;
  redis?: Redis;
  dispose(): Promise<void>;
}

const STORES: [string, () => Promise<OpenStore>][] = [
  [
    "SqliteJobStore",
    async () => {
      const dataDir = makeDataDir();
      const store = new SqliteJobStore(dataDir);
      return { store, dispose: async () => (await store.close(), fs.rmSync(dataDir, { recursive: true, force: true })) };
    },
  ],
  [
    "RedisJobStore",
    async () => {
      const server = await startRedisServer();
      const redis = new Redis(server.url);
      const store = new RedisJobStore(new Redis(server.url), { deliveryLeaseMs: 60_000 });
      return { store, redis, dispose: async () => (redis.disconnect(), await store.close(), await server.dispose()) };
    },
  ],
];

/** Deliveries created oldest first: `a1` is key_a's first, due at 1000 + its place. */
const ORDER = ["a1", "a2", "a3", "a4", "a5", "a6", "b1", "c1", "c2"];

async function createAll(store: JobStore): Promise<void> {
  for (const [n, name] of ORDER.entries()) {
    await store.createDelivery({ jobId: `job_${name}`, apiKeyId: `key_${name[0]}`, url: "https://example.com/hook", messageId: `msg_${name}`, payload: "{}", images: new Map(), createdAtMs: 1_000 + n, nextAttemptAtMs: 1_000 + n });
  }
}

const names = (deliveries: WebhookDelivery[]) => deliveries.map((delivery) => delivery.jobId.slice("job_".length));
const inFlight = (deliveries: WebhookDelivery[]): DueDeliveries["inFlight"] => deliveries.map(({ id, apiKeyId }) => ({ id, apiKeyId }));

let open: OpenStore | undefined;
afterEach(async () => {
  await open?.dispose();
  open = undefined;
});

describe.each(STORES)("%s: due webhook deliveries", (_name, openStore) => {
  it("lets keys take turns, never hands out one in flight and keeps each key within its limit", async () => {
    open = await openStore();
    const { store } = open;
    await createAll(store);

    const first = await store.dueDeliveries(2_000, { limit: 4, perKeyLimit: 3, inFlight: [] });
    expect(names(first)).toEqual(["a1", "b1", "c1", "a2"]);

    // key_a holds 2 of its 3 places, key_c 1: c2 comes before a3, and nothing else of key_a.
    const second = await store.dueDeliveries(2_000, { limit: 10, perKeyLimit: 3, inFlight: inFlight(first) });
    expect(names(second)).toEqual(["c2", "a3"]);

    const running = [...first, ...second];
    expect(await store.dueDeliveries(2_000, { limit: 10, perKeyLimit: 3, inFlight: inFlight(running) })).toEqual([]);

    // a1 delivered frees one of key_a's places for a4.
    const a1 = running.find((delivery) => delivery.jobId === "job_a1")!;
    await store.recordAttempt(a1.id, { at: new Date(2_000).toISOString(), statusCode: 200, error: null }, { status: "delivered", nextAttemptAtMs: 2_000 });
    const third = await store.dueDeliveries(2_000, { limit: 10, perKeyLimit: 3, inFlight: inFlight(running.filter((delivery) => delivery !== a1)) });
    expect(names(third)).toEqual(["a4"]);
  });

  it("hands out nothing before it is due, and a retried delivery when its next attempt comes", async () => {
    open = await openStore();
    const { store } = open;
    await createAll(store);
    expect(await store.dueDeliveries(999, { limit: 10, perKeyLimit: 3, inFlight: [] })).toEqual([]);

    const [b1] = (await store.dueDeliveries(2_000, { limit: 10, perKeyLimit: 3, inFlight: [] })).filter((delivery) => delivery.apiKeyId === "key_b");
    await store.recordAttempt(b1!.id, { at: new Date(2_000).toISOString(), statusCode: 500, error: "The receiver answered 500." }, { status: "pending", nextAttemptAtMs: 5_000 });
    const due = (at: number) => store.dueDeliveries(at, { limit: 10, perKeyLimit: 10, inFlight: [] });
    expect(names(await due(4_999)).filter((name) => name === "b1")).toEqual([]);
    expect(names(await due(200_000)).filter((name) => name === "b1")).toEqual(["b1"]);
  });
});

describe("RedisJobStore: deliveries in a single due line", () => {
  it("takes them into their keys' lines", async () => {
    open = await STORES[1]![1]();
    const { store, redis } = open;
    await createAll(store);
    // The single line a router of the older layout keeps: every due delivery by next attempt.
    const prefix = "atelier:jobs:";
    for (const key of ["key_a", "key_b", "key_c"]) {
      const line = await redis!.zrange(`${prefix}deliveries-due:${key}`, 0, -1, "WITHSCORES");
      for (let i = 0; i < line.length; i += 2) await redis!.zadd(`${prefix}deliveries-due`, line[i + 1]!, line[i]!);
      await redis!.del(`${prefix}deliveries-due:${key}`);
    }
    await redis!.del(`${prefix}delivery-keys`);

    expect(names(await store.dueDeliveries(2_000, { limit: 3, perKeyLimit: 3, inFlight: [] }))).toEqual(["a1", "b1", "c1"]);
    expect(await redis!.exists(`${prefix}deliveries-due`)).toBe(0);
  });
});
