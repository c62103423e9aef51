/**
 * Each job store (SQLite, and Redis on a real redis-server) keeps a job's images as bytes beside
 * its record (issue 19: a 20 MB data URL read or written as part of a record held the router's
 * event loop): the record holds stand-ins, the bytes read back whole (Redis moves them in 1 MB
 * pieces) or a chunk at a time for answers, and each set of bytes is deleted when nothing needs it
 * any more: the request's when the job finishes, a webhook's copy once delivered, the result's when
 * purged.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepRequestImages, keepResultImages, type StoredImage } from "../../jobs/job-images.js";
import type { JobStore } from "../../jobs/job-store.js";
import { RedisJobStore } from "../../jobs/redis-job-store.js";
import { JOBS_DATABASE_FILE, SqliteJobStore } from "../../jobs/sqlite-job-store.js";
import { skipWithoutRedis, startRedisServer } from "../support/redis-server.js";
import { makeDataDir } from "../support/test-service.js";

/** A fresh store, the characters its record of a job takes, and what removes it. */
type OpenStore = () => Promise<{ store: JobStore; recordChars(id: string): Promise<number>; dispose(): Promise<void> }>;

const STORES: [string, OpenStore, boolean][] = [
  [
    "SqliteJobStore",
    async () => {
      const dataDir = makeDataDir();
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
    },
    false,
  ],
  [
    "RedisJobStore",
    async () => {
      const server = await startRedisServer();
      const redis = new Redis(server.url);
      const store = new RedisJobStore(new Redis(server.url), { deliveryLeaseMs: 1_000 });
      const recordChars = async (id: string) => Object.values(await redis.hgetall(`atelier:jobs:job:${id}`)).reduce((sum, value) => sum + value.length, 0);
      return { store, recordChars, dispose: async () => (redis.disconnect(), await store.close(), await server.dispose()) };
    },
    skipWithoutRedis("RedisJobStore images"),
  ],
];

/** 2.5 MB of bytes that are not all alike (several of Redis's 1 MB pieces, the last one short). */
function bytes(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[i] = state >>> 24;
  }
  return out;
}

const only = (images: ReadonlyMap<string, StoredImage>, part: StoredImage["blob"]["part"]) => [...images.values()].filter((image) => image.blob.part === part);

describe.each(STORES.filter(([, , skip]) => !skip))("%s images", (_name, open) => {
  let opened: Awaited<ReturnType<OpenStore>>;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(async () => {
    await opened.dispose();
  });

  it("keeps them beside the record, reads them back whole, and deletes each set when it is no longer needed", async () => {
    const { store, recordChars } = opened;
    const request = Buffer.concat([Buffer.from("data:image/png;base64,"), Buffer.from(bytes(1_900_000, 1).toString("base64"))]);
    const imageUrl = request.toString("latin1");
    const submitted = keepRequestImages({ imageUrl, scale: 2 }, (text) => (text === imageUrl ? request : undefined));
    const inserted = await store.insert(
      { id: "job_images", apiKeyId: "key_a", operation: "/v1/tools/upscale", input: submitted.input, images: submitted.images, requestId: "req_1", webhookUrl: "https://example.com/hook", createdAtMs: 1_000 },
      { maxActivePerKey: 10, maxQueued: 10 },
    );
    expect("inserted" in inserted).toBe(true);
    expect(await recordChars("job_images")).toBeLessThan(2_000);
    const queued = (await store.get("job_images"))!;
    const [requestImage] = only(queued.images, "input");
    expect((await store.readImage("job_images", requestImage!.blob))!.equals(request)).toBe(true);

    const png = bytes(2_500_000, 2);
    const result = { id: "req_1", data: [{ url: "stand-in", mimeType: "image/png", width: 1, height: 1 }] };
    const images = keepResultImages(result, new Map([["stand-in", { bytes: png, mimeType: "image/png" }]]));
    expect(await store.finish("job_images", { status: "succeeded", result, images }, 2_000, 3_000)).toBe(true);
    expect(await recordChars("job_images")).toBeLessThan(2_000);
    const finished = (await store.get("job_images"))!;
    expect(finished.result).toEqual(result);
    // A finished job never runs again: its request's bytes are gone, its description stays.
    expect(await store.readImage("job_images", requestImage!.blob)).toBeNull();
    expect(only(finished.images, "input")).toEqual([requestImage]);
    const [resultImage] = only(finished.images, "result");
    expect((await store.readImage("job_images", resultImage!.blob))!.equals(png)).toBe(true);

    await store.createDelivery({ jobId: "job_images", apiKeyId: "key_a", url: "https://example.com/hook", messageId: "msg_job_images", payload: "{}", images: new Map([["stand-in", resultImage!]]), createdAtMs: 2_000, nextAttemptAtMs: 2_000 });
    const delivery = (await store.deliveryOf("job_images"))!;
    const [copy] = [...delivery.images.values()];
    expect(copy!.blob).not.toEqual(resultImage!.blob);
    expect((await store.readImage("job_images", copy!.blob))!.equals(png)).toBe(true);
    await store.recordAttempt(delivery.id, { at: new Date(2_500).toISOString(), statusCode: 200, error: null }, { status: "delivered", nextAttemptAtMs: 2_500 });
    expect(await store.readImage("job_images", copy!.blob)).toBeNull();
    expect((await store.readImage("job_images", resultImage!.blob))!.equals(png)).toBe(true);

    expect((await store.purge(3_000, 0, 0)).results).toBe(1);
    expect(await store.readImage("job_images", resultImage!.blob)).toBeNull();
    expect((await store.get("job_images"))!.result).toBeNull();
  });

  it("reads an image a chunk at a time, as often as asked, and fails or has no reader once it is deleted", async () => {
    const { store } = opened;
    await store.insert(
      { id: "job_chunks", apiKeyId: "key_a", operation: "/v1/tools/upscale", input: {}, requestId: "req_2", webhookUrl: null, createdAtMs: 1_000 },
      { maxActivePerKey: 10, maxQueued: 10 },
    );
    const png = bytes(200_000, 3);
    const result = { id: "req_2", data: [{ url: "stand-in", mimeType: "image/png", width: 1, height: 1 }] };
    const images = keepResultImages(result, new Map([["stand-in", { bytes: png, mimeType: "image/png" }]]));
    expect(await store.finish("job_chunks", { status: "succeeded", result, images }, 2_000, 3_000)).toBe(true);
    const [image] = only((await store.get("job_chunks"))!.images, "result");

    const reader = (await store.imageReader("job_chunks", image!.blob))!;
    expect(reader.length).toBe(png.length);
    for (let time = 0; time < 2; time++) {
      const chunks: Buffer[] = [];
      for await (const chunk of reader.chunks(48 * 1024)) chunks.push(chunk);
      expect(chunks.map((chunk) => chunk.length)).toEqual([49_152, 49_152, 49_152, 49_152, 3_392]);
      expect(Buffer.concat(chunks).equals(png)).toBe(true);
    }

    // A reader whose image is purged before it reads fails rather than giving other or fewer bytes.
    const stale = (await store.imageReader("job_chunks", image!.blob))!;
    expect((await store.purge(3_000, 0, 0)).results).toBe(1);
    await expect((async () => {
      for await (const _chunk of stale.chunks(48 * 1024));
    })()).rejects.toThrow();
    expect(await store.imageReader("job_chunks", image!.blob)).toBeNull();
  });
});

describe("SqliteJobStore after a crash", () => {
  it("deletes at its first purge the image folders no record refers to, and keeps the others", async () => {
    const dataDir = makeDataDir();
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
