/**
 * Issue 19: a job's images are kept as bytes beside its record, never inside it (reading or writing
 * a 20 MB data URL in SQLite held the router's event loop for hundreds of milliseconds). Over real
 * HTTP with the real SQLite queue: the stored rows hold no image, every answer still carries it
 * (the job, the raw result, the result event, an idempotent replay), the purge deletes the bytes,
 * and a store written before (images inline) is converted when opened and answers as it did.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_IMAGES_FOLDER } from "../../jobs/job-image-blobs.js";
import { imageBytesOf } from "../../jobs/job-image-reads.js";
import { jsonPieces, piecesText } from "../../jobs/json-pieces.js";
import { JOBS_DATABASE_FILE, SqliteJobStore } from "../../jobs/sqlite-job-store.js";
import { SqliteApiKeyStore } from "../../server/keys/sqlite-api-key-store.js";
import { bytesOfDataUrl, dataUrl } from "../support/test-images.js";
import { fileTempDir } from "../support/temp-dir.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { call, finishedJob, getJob, submitAsync } from "./job-helpers.js";

type ImageBody = Record<string, unknown> & { data: { url: string; mimeType: string; width: number; height: number }[] };

/** A noisy PNG (it does not compress): its data URL is long enough to be a body's long string (over 64 KiB). */
async function noisyPng(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  let state = 1;
  for (let i = 0; i < pixels.length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    pixels[i] = state >>> 24;
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

const row = (dataDir: string, id: string) => {
  const db = new Database(path.join(dataDir, JOBS_DATABASE_FILE), { readonly: true });
  try {
    return db.prepare<[string], { input: string; result: string | null; images: string | null }>("SELECT input, result, images FROM jobs WHERE id = ?").get(id)!;
  } finally {
    db.close();
  }
};
const imageFiles = (dataDir: string, id: string) => {
  const folder = path.join(dataDir, JOB_IMAGES_FOLDER, id);
  return fs.existsSync(folder) ? fs.readdirSync(folder).sort() : [];
};

/** The `data:` of an event stream's `result` event, asked to carry the result. */
async function resultEvent(service: TestService, key: string, id: string): Promise<unknown> {
  const text = await (await call(service, "GET", `/jobs/${id}/events?include=result`, key)).text();
  const event = text.split("\n\n").find((block) => block.includes("event: result"))!;
  return JSON.parse(event.split("\n").find((line) => line.startsWith("data: "))!.slice("data: ".length));
}

describe("a job's images in the SQLite store", () => {
  let service: TestService;
  let key: string;
  let png: Buffer;

  beforeAll(async () => {
    service = await startTestService({ ATELIER_JOB_MAX_WAIT_SECONDS: "30" });
    key = await service.createKey("images");
    png = await noisyPng(160, 120);
  });
  afterAll(async () => {
    await service.close();
  });

  it("are bytes beside the row, which holds none, and every answer still carries them", async () => {
    const body = { imageUrl: dataUrl(png), scale: 2 };
    expect(body.imageUrl.length).toBeGreaterThan(64 * 1024);
    const synchronous = (await (await service.post("/tools/upscale", body, key)).json()) as ImageBody;
    const submitted = await submitAsync(service, "/tools/upscale", body, key, { "idempotency-key": "stored-images-1" });
    const done = await finishedJob(service, key, submitted.id);
    expect(done.status).toBe("succeeded");

    const stored = row(service.dataDir, submitted.id);
    expect(stored.input.length).toBeLessThan(1024);
    expect(stored.result!.length).toBeLessThan(1024);
    expect(stored.input).not.toContain("base64");
    expect(stored.result).not.toContain("base64");
    // The request's bytes went when the job finished; the result's stay until the purge.
    expect(imageFiles(service.dataDir, submitted.id)).toEqual([expect.stringMatching(/^result-/)]);

    const result = done.result as ImageBody;
    expect(bytesOfDataUrl(result.data[0]!.url).equals(bytesOfDataUrl(synchronous.data[0]!.url))).toBe(true);
    expect({ ...result, id: "", created: 0 }).toEqual({ ...synchronous, id: "", created: 0 });
    const raw = await call(service, "GET", `/jobs/${submitted.id}/result`, key);
    expect(Buffer.from(await raw.arrayBuffer()).equals(bytesOfDataUrl(result.data[0]!.url))).toBe(true);
    expect(await resultEvent(service, key, submitted.id)).toEqual({ status: "succeeded", jobUrl: `/api/v1/jobs/${submitted.id}`, resultUrl: `/api/v1/jobs/${submitted.id}/result`, result });
    const replay = await service.post("/tools/upscale", body, key, { prefer: "wait=30", "idempotency-key": "stored-images-1" });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(result);
  });

  it("are deleted by the purge: the result's when it expires, the rest with the record", async () => {
    const submitted = await submitAsync(service, "/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key);
    const done = await finishedJob(service, key, submitted.id);
    expect(imageFiles(service.dataDir, submitted.id)).toHaveLength(1);
    const { store } = service.jobs.service;
    await store.purge(Date.parse(done.expiresAt!) + 1, 0, 0);
    expect(imageFiles(service.dataDir, submitted.id)).toEqual([]);
    expect((await call(service, "GET", `/jobs/${submitted.id}/result`, key)).status).toBe(410);
    expect((await getJob(service, key, submitted.id)).result).toBeUndefined();
    await store.purge(Date.parse(done.expiresAt!) + 1, Date.parse(done.finishedAt!) + 1, 0);
    expect(fs.existsSync(path.join(service.dataDir, JOB_IMAGES_FOLDER, submitted.id))).toBe(false);
    expect((await call(service, "GET", `/jobs/${submitted.id}`, key)).status).toBe(404);
  });
});

/** The jobs schema as version 2 left it, before images were kept apart (sqlite-job-store.ts's first two migrations). */
const VERSION_2_SCHEMA = `
  CREATE TABLE jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, api_key_id TEXT NOT NULL, operation TEXT NOT NULL,
    input TEXT NOT NULL, request_id TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL, started_at INTEGER, finished_at INTEGER, progress TEXT NOT NULL, result TEXT,
    error TEXT, result_expires INTEGER, webhook_url TEXT
  ) STRICT;
  CREATE INDEX jobs_by_key ON jobs (api_key_id, seq);
  CREATE INDEX jobs_by_status ON jobs (status, seq);
  CREATE TABLE job_events (id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL) STRICT;
  CREATE INDEX job_events_by_job ON job_events (job_id, id);
  CREATE TABLE idempotency_keys (
    api_key_id TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, job_id TEXT NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (api_key_id, key)
  ) STRICT;
  CREATE TABLE webhook_secrets (api_key_id TEXT PRIMARY KEY, secret TEXT NOT NULL) STRICT;
  CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL UNIQUE, api_key_id TEXT NOT NULL, url TEXT NOT NULL,
    message_id TEXT NOT NULL, payload TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL,
    next_attempt INTEGER NOT NULL, attempts TEXT NOT NULL
  ) STRICT;
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt);
  PRAGMA user_version = 2;`;

describe("a SQLite job store written before images were kept apart", () => {
  const dataDir = fileTempDir("test");
  let service: TestService | undefined;
  let key: string;
  let keyId: string;
  let png: Buffer;
  let oldResult: ImageBody;
  let oldPayload: string;
  const now = Date.now();

  beforeAll(async () => {
    const keys = SqliteApiKeyStore.open(dataDir);
    const created = await keys.create({ name: "old", hourlyLimit: null });
    await keys.close();
    key = created.key;
    keyId = created.record.id;
    png = await noisyPng(160, 120);
    const resultPng = await noisyPng(320, 240);
    oldResult = { id: "req_old", created: 1, model: "lanczos", data: [{ url: dataUrl(resultPng), mimeType: "image/png", width: 320, height: 240 }] };
    const input = JSON.stringify({ imageUrl: dataUrl(png), scale: 2 });
    oldPayload = JSON.stringify({ type: "job.succeeded", timestamp: new Date(now).toISOString(), data: { id: "job_old_done", object: "job", result: oldResult } });
    const progress = JSON.stringify({ fraction: 0, step: 0, steps: 0, stage: "queued" });
    const db = new Database(path.join(dataDir, JOBS_DATABASE_FILE));
    db.exec(VERSION_2_SCHEMA);
    const insert = db.prepare(
      `INSERT INTO jobs (id, api_key_id, operation, input, request_id, status, attempts, created_at, started_at, finished_at, progress, result, result_expires)
       VALUES (?, ?, '/v1/tools/upscale', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    insert.run("job_old_done", keyId, input, "req_old", "succeeded", 1, now - 2000, now - 1900, now - 1000, JSON.stringify({ fraction: 1, step: 0, steps: 0, stage: "done" }), JSON.stringify(oldResult), now + 3_600_000);
    insert.run("job_old_queued", keyId, input, "req_queued", "queued", 0, now - 500, null, null, progress, null, null);
    db.prepare(
      `INSERT INTO webhook_deliveries (job_id, api_key_id, url, message_id, payload, status, created_at, next_attempt, attempts)
       VALUES ('job_old_done', ?, 'https://example.invalid/hook', 'msg_job_old_done', ?, 'pending', ?, ?, '[]')`,
    ).run(keyId, oldPayload, now, now + 3_600_000);
    db.close();
  });
  afterAll(async () => {
    await service?.close();
  });

  it("is converted when opened: its rows lose their images to files, and read back as they were", async () => {
    const store = new SqliteJobStore(dataDir);
    try {
      const done = row(dataDir, "job_old_done");
      expect(done.result!.length).toBeLessThan(1024);
      expect(done.input.length).toBeLessThan(1024);
      // A finished job's request is only described; a queued one's bytes are kept to run it.
      expect(imageFiles(dataDir, "job_old_done")).toEqual([expect.stringMatching(/^result-/), expect.stringMatching(/^webhook-/)]);
      expect(imageFiles(dataDir, "job_old_queued")).toEqual([expect.stringMatching(/^input-/)]);
      const job = (await store.get("job_old_done"))!;
      const images = (await imageBytesOf(store, job.id, job.images))!;
      let text = "";
      for await (const piece of piecesText((await jsonPieces(job.result, images))!)) text += piece;
      expect(text).toBe(JSON.stringify(oldResult));
      // The pending webhook sends exactly the payload it would have sent.
      const delivery = (await store.deliveryOf("job_old_done"))!;
      let payload = "";
      for await (const piece of piecesText((await jsonPieces(JSON.parse(delivery.payload), (await imageBytesOf(store, job.id, delivery.images))!))!)) payload += piece;
      expect(payload).toBe(oldPayload);
    } finally {
      await store.close();
    }
  });

  it("answers its finished job as before and runs its queued one", async () => {
    service = await startTestService({}, dataDir);
    const done = await getJob(service, key, "job_old_done");
    expect(done.result).toEqual(oldResult);
    const raw = await call(service, "GET", "/jobs/job_old_done/result", key);
    expect(Buffer.from(await raw.arrayBuffer()).equals(bytesOfDataUrl(oldResult.data[0]!.url))).toBe(true);
    const queued = await finishedJob(service, key, "job_old_queued");
    expect(queued.status).toBe("succeeded");
    const synchronous = (await (await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key)).json()) as ImageBody;
    expect(bytesOfDataUrl((queued.result as ImageBody).data[0]!.url).equals(bytesOfDataUrl(synchronous.data[0]!.url))).toBe(true);
  });
});
