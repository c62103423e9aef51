/**
 * Both job stores keep the one contract (test/support/job-store-contract.ts): SQLite in a fresh data
 * folder, Redis on a real redis-server this file starts. Beside it, what only one store has: SQLite
 * recovering image folders a crash left behind, Redis taking over a router of the older layout's
 * single due line of deliveries.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { keepRequestImages, type StoredImage } from "../../jobs/job-images.js";
import { RedisJobStore } from "../../jobs/redis-job-store.js";
import { JOBS_DATABASE_FILE, SqliteJobStore } from "../../jobs/sqlite-job-store.js";
import { createAll, jobStoreContract, names, type OpenedJobStore } from "../support/job-store-contract.js";
import { startRedisServer } from "../support/redis-server.js";
import { makeTempDir } from "../support/temp-dir.js";

async function openSqlite(): Promise<OpenedJobStore> {
  const dataDir = makeTempDir("test");
  const store = new SqliteJobStore(dataDir);
  const recordChars = async (id: string) => {
    const db = new Database(path.join(dataDir, JOBS_DATABASE_FILE), { readonly: true });
    try {
      return db.prepare<[string], { n: number }>("SELECT length(input) + coalesce(length(result), 0) + coalesce(length(images), 0) AS n FROM jobs WHERE id = ?").get(id)!.n;
    } finally {
      db.close();
    }
  };
  return { store, recordChars, dispose: async () => (await store.close(), fs.rmSync(dataDir, { recursive: true, force: true })) };
}

async function openRedis({ deliveryLeaseMs }: { deliveryLeaseMs: number }): Promise<OpenedJobStore & { redis: Redis }> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const store = new RedisJobStore(new Redis(server.url), { deliveryLeaseMs });
  const recordChars = async (id: string) => Object.values(await redis.hgetall(`atelier:jobs:job:${id}`)).reduce((sum, value) => sum + value.length, 0);
  return { store, redis, recordChars, dispose: async () => (redis.disconnect(), await store.close(), await server.dispose()) };
}

jobStoreContract("SqliteJobStore", openSqlite);
jobStoreContract("RedisJobStore", openRedis);

const only = (images: ReadonlyMap<string, StoredImage>, part: StoredImage["blob"]["part"]) => [...images.values()].filter((image) => image.blob.part === part);

describe("SqliteJobStore after a crash", () => {
  it("deletes at its first purge the image folders no record refers to, and keeps the others", async () => {
    const dataDir = makeTempDir("test");
    try {
      const store = new SqliteJobStore(dataDir);
      const submitted = keepRequestImages({ imageUrl: "x", scale: 2 }, (text) => (text === "x" ? Buffer.from("data:image/png;base64,AAAA") : undefined));
      await store.insert(
        { id: "job_kept", apiKeyId: "key_a", operation: "/v1/tools/upscale", input: submitted.input, images: submitted.images, requestId: "req_1", webhookUrl: null, createdAtMs: 1_000 },
        { maxActivePerKey: 10, maxQueued: 10 },
      );
      await store.close();
      // What a crash between writing a job's images and its row leaves, an hour old; and one just written.
      const folders = path.join(dataDir, "job-images");
      const hourAgo = new Date(Date.now() - 3_600_000);
      for (const id of ["job_crashed", "job_kept"]) {
        if (id === "job_crashed") fs.mkdirSync(path.join(folders, id));
        fs.writeFileSync(path.join(folders, id, "input-orphan"), "bytes");
        fs.utimesSync(path.join(folders, id), hourAgo, hourAgo);
      }
      fs.mkdirSync(path.join(folders, "job_being_inserted"));
      fs.writeFileSync(path.join(folders, "job_being_inserted", "input-a"), "bytes");

      const reopened = new SqliteJobStore(dataDir);
      await reopened.purge(Date.now(), 0, 0);
      expect(fs.readdirSync(folders).sort()).toEqual(["job_being_inserted", "job_kept"]);
      const [image] = only((await reopened.get("job_kept"))!.images, "input");
      expect((await reopened.readImage("job_kept", image!.blob))!.toString()).toBe("data:image/png;base64,AAAA");
      await reopened.close();
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

let opened: (OpenedJobStore & { redis: Redis }) | undefined;
afterEach(async () => {
  await opened?.dispose();
  opened = undefined;
});

describe("RedisJobStore: deliveries in a single due line", () => {
  it("takes them into their keys' lines", async () => {
    opened = await openRedis({ deliveryLeaseMs: 60_000 });
    const { store, redis } = opened;
    await createAll(store);
    // The single line a router of the older layout keeps: every due delivery by next attempt.
    const prefix = "atelier:jobs:";
    for (const key of ["key_a", "key_b", "key_c"]) {
      const line = await redis.zrange(`${prefix}deliveries-due:${key}`, 0, -1, "WITHSCORES");
      for (let i = 0; i < line.length; i += 2) await redis.zadd(`${prefix}deliveries-due`, line[i + 1]!, line[i]!);
      await redis.del(`${prefix}deliveries-due:${key}`);
    }
    await redis.del(`${prefix}delivery-keys`);

    expect(names(await store.dueDeliveries(2_000, { limit: 3, perKeyLimit: 3, inFlight: [] }))).toEqual(["a1", "b1", "c1"]);
    expect(await redis.exists(`${prefix}deliveries-due`)).toBe(0);
  });
});
