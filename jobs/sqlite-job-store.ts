/**
 * The embedded job queue: tables in `<dataDir>/jobs.db` (SQLite, WAL mode). Every state change is
 * one statement or one transaction, so a router that stops at any point leaves a consistent queue
 * that the next start recovers (see {@link JobStore.recover}).
 *
 * Images are not in the tables: a job's request and result images are files under
 * `<dataDir>/job-images/` (job-image-blobs.ts), written before the row that refers to them, and
 * the rows hold stand-ins (job-images.ts). better-sqlite3 is synchronous: a 20 MB value read,
 * written or freed (a purge walks its overflow pages) held the event loop for the whole of it.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { PublicError } from "../core/errors.js";
import { QUEUED_PROGRESS, type JobProgress, type JobRecord, type JobStatus } from "./job-record.js";
import { IDEMPOTENCY_WINDOW_MS } from "./idempotency.js";
import { copyForDelivery, FileImageBlobs, insertWithImages, JOB_IMAGES_FOLDER, type BlobReader } from "./job-image-blobs.js";
import { imagesJson, keepLegacyImages, NO_IMAGES, parseImages, storedOnly, type BlobRef, type ImagesToStore } from "./job-images.js";
import { newJobValues, type DueDeliveries, type IdempotencyEntry, type InsertOutcome, type WebhookAttempt, type WebhookDelivery, type JobEvent, type JobListPage, type JobOutcome, type JobStore, type LocalJobQueue, type NewJob, type QueueHead, type QueueLimits } from "./job-store.js";

export const JOBS_DATABASE_FILE = "jobs.db";

/** A migration: SQL, or a step that also moves data (given the image files). */
type Migration = string | ((db: Database.Database, blobs: FileImageBlobs) => void);

/** Migration N takes the schema from version N to N+1 (`PRAGMA user_version`). Append, never edit. */
const MIGRATIONS: readonly Migration[] = [
  `CREATE TABLE jobs (
     seq            INTEGER PRIMARY KEY AUTOINCREMENT,
     id             TEXT NOT NULL UNIQUE,
     api_key_id     TEXT NOT NULL,
     operation      TEXT NOT NULL,
     input          TEXT NOT NULL,
     request_id     TEXT NOT NULL,
     status         TEXT NOT NULL,
     attempts       INTEGER NOT NULL DEFAULT 0,
     created_at     INTEGER NOT NULL,
     started_at     INTEGER,
     finished_at    INTEGER,
     progress       TEXT NOT NULL,
     result         TEXT,
     error          TEXT,
     result_expires INTEGER,
     webhook_url    TEXT
   ) STRICT;
   CREATE INDEX jobs_by_key ON jobs (api_key_id, seq);
   CREATE INDEX jobs_by_status ON jobs (status, seq);
   CREATE TABLE job_events (
     id     INTEGER PRIMARY KEY AUTOINCREMENT,
     job_id TEXT NOT NULL,
     type   TEXT NOT NULL,
     data   TEXT NOT NULL
   ) STRICT;
   CREATE INDEX job_events_by_job ON job_events (job_id, id);
   CREATE TABLE idempotency_keys (
     api_key_id  TEXT NOT NULL,
     key         TEXT NOT NULL,
     fingerprint TEXT NOT NULL,
     job_id      TEXT NOT NULL,
     created_at  INTEGER NOT NULL,
     PRIMARY KEY (api_key_id, key)
   ) STRICT;`,
  `CREATE TABLE webhook_secrets (
     api_key_id TEXT PRIMARY KEY,
     secret     TEXT NOT NULL
   ) STRICT;
   CREATE TABLE webhook_deliveries (
     id           INTEGER PRIMARY KEY AUTOINCREMENT,
     job_id       TEXT NOT NULL UNIQUE,
     api_key_id   TEXT NOT NULL,
     url          TEXT NOT NULL,
     message_id   TEXT NOT NULL,
     payload      TEXT NOT NULL,
     status       TEXT NOT NULL,
     created_at   INTEGER NOT NULL,
     next_attempt INTEGER NOT NULL,
     attempts     TEXT NOT NULL
   ) STRICT;
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt);`,
  keepImagesApart,
];

/**
 * Images out of the rows: an `images` column (job-images.ts) on jobs and deliveries, and the rows
 * stored before it converted once, their data URLs moved into files. A finished job's request
 * images are only described (a finished job never runs again, so their bytes are not kept).
 */
function keepImagesApart(db: Database.Database, blobs: FileImageBlobs): void {
  db.exec("ALTER TABLE jobs ADD COLUMN images TEXT; ALTER TABLE webhook_deliveries ADD COLUMN images TEXT;");
  const rows = db.prepare<[], { id: string; status: JobStatus; input: string; result: string | null }>("SELECT id, status, input, result FROM jobs").all();
  const update = db.prepare("UPDATE jobs SET input = ?, result = ?, images = ? WHERE id = ?");
  for (const row of rows) {
    const input = keepLegacyImages(JSON.parse(row.input), "input");
    const result = row.result === null ? { value: null, images: new Map() } : keepLegacyImages(JSON.parse(row.result), "result");
    if (input.images.size + result.images.size === 0) continue;
    if (row.status === "queued" || row.status === "running") blobs.writeSync(row.id, input.images);
    blobs.writeSync(row.id, result.images);
    const images = new Map([...storedOnly(input.images), ...storedOnly(result.images)]);
    update.run(JSON.stringify(input.value), row.result === null ? null : JSON.stringify(result.value), imagesJson(images), row.id);
  }
  const deliveries = db.prepare<[], { id: number; job_id: string; payload: string }>("SELECT id, job_id, payload FROM webhook_deliveries WHERE status = 'pending'").all();
  for (const delivery of deliveries) {
    const payload = keepLegacyImages(JSON.parse(delivery.payload), "webhook");
    if (payload.images.size === 0) continue;
    blobs.writeSync(delivery.job_id, payload.images);
    db.prepare("UPDATE webhook_deliveries SET payload = ?, images = ? WHERE id = ?").run(JSON.stringify(payload.value), imagesJson(storedOnly(payload.images)), delivery.id);
  }
}

function migrate(db: Database.Database, blobs: FileImageBlobs): void {
  const run = db.transaction(() => {
    const current = db.pragma("user_version", { simple: true }) as number;
    if (current > MIGRATIONS.length) {
      throw new Error(`jobs schema is at version ${current}, newer than this build knows (${MIGRATIONS.length}); upgrade the service.`);
    }
    for (const migration of MIGRATIONS.slice(current)) {
      if (typeof migration === "string") db.exec(migration);
      else migration(db, blobs);
    }
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  run.immediate();
}

interface JobRow {
  seq: number;
  id: string;
  api_key_id: string;
  operation: string;
  input: string;
  request_id: string;
  status: JobStatus;
  attempts: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  progress: string;
  result: string | null;
  error: string | null;
  result_expires: number | null;
  webhook_url: string | null;
  images: string | null;
}

function fromRow(row: JobRow): JobRecord {
  return {
    id: row.id,
    apiKeyId: row.api_key_id,
    operation: row.operation,
    input: JSON.parse(row.input) as unknown,
    requestId: row.request_id,
    status: row.status,
    attempts: row.attempts,
    createdAtMs: row.created_at,
    startedAtMs: row.started_at,
    finishedAtMs: row.finished_at,
    progress: JSON.parse(row.progress) as JobProgress,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    error: row.error === null ? null : (JSON.parse(row.error) as JobRecord["error"]),
    resultExpiresAtMs: row.result_expires,
    webhookUrl: row.webhook_url,
    images: parseImages(row.images),
  };
}

interface DeliveryRow {
  id: number;
  job_id: string;
  api_key_id: string;
  url: string;
  message_id: string;
  payload: string;
  status: WebhookDelivery["status"];
  created_at: number;
  next_attempt: number;
  attempts: string;
  images: string | null;
}

function deliveryFromRow(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    jobId: row.job_id,
    apiKeyId: row.api_key_id,
    url: row.url,
    messageId: row.message_id,
    payload: row.payload,
    status: row.status,
    createdAtMs: row.created_at,
    nextAttemptAtMs: row.next_attempt,
    attempts: JSON.parse(row.attempts) as WebhookAttempt[],
    images: parseImages(row.images),
  };
}

/** Image folders without a record are left alone this long after their last write (a job being inserted). */
const ORPHAN_AGE_MS = 10 * 60_000;

export class SqliteJobStore implements JobStore, LocalJobQueue {
  private readonly db: Database.Database;
  private readonly blobs: FileImageBlobs;
  private sweptOrphans = false;

  constructor(dataDir: string) {
    fs.mkdirSync(dataDir, { recursive: true });
    this.db = new Database(path.join(dataDir, JOBS_DATABASE_FILE));
    this.blobs = new FileImageBlobs(path.join(dataDir, JOB_IMAGES_FOLDER));
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    // NORMAL still survives a process crash in WAL mode.
    this.db.pragma("synchronous = NORMAL");
    migrate(this.db, this.blobs);
  }

  private readonly insertTx = (job: NewJob, images: ImagesToStore, limits: QueueLimits): InsertOutcome => {
    const active = this.db
      .prepare<[string], { n: number }>("SELECT count(*) AS n FROM jobs WHERE api_key_id = ? AND status IN ('queued', 'running')")
      .get(job.apiKeyId)!.n;
    if (active >= limits.maxActivePerKey) return { refused: "key" };
    const queued = this.db.prepare<[], { n: number }>("SELECT count(*) AS n FROM jobs WHERE status = 'queued'").get()!.n;
    if (queued >= limits.maxQueued) return { refused: "queue" };
    this.db
      .prepare(
        `INSERT INTO jobs (id, api_key_id, operation, input, request_id, status, created_at, progress, webhook_url, images)
         VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
      )
      .run(...newJobValues(job), job.webhookUrl, imagesJson(storedOnly(images)));
    return { inserted: this.getSync(job.id)! };
  };

  insert(job: NewJob, limits: QueueLimits): Promise<InsertOutcome> {
    return insertWithImages(this.blobs, job, async (images) => this.db.transaction(this.insertTx).immediate(job, images, limits));
  }

  async readImage(jobId: string, blob: BlobRef): Promise<Buffer | null> {
    return this.blobs.read(jobId, blob);
  }

  imageReader(jobId: string, blob: BlobRef): Promise<BlobReader | null> {
    return this.blobs.reader(jobId, blob);
  }

  private getSync(id: string): JobRecord | null {
    const row = this.db.prepare<[string], JobRow>("SELECT * FROM jobs WHERE id = ?").get(id);
    return row ? fromRow(row) : null;
  }

  async get(id: string): Promise<JobRecord | null> {
    return this.getSync(id);
  }

  async list(apiKeyId: string, options: { status?: JobStatus; cursor?: string; limit: number }): Promise<JobListPage> {
    return this.listForKeys([apiKeyId], options);
  }

  async listForKeys(apiKeyIds: string[], options: { status?: JobStatus; cursor?: string; limit: number }): Promise<JobListPage> {
    // The key ids travel as one JSON array parameter, however many there are.
    const keys = JSON.stringify(apiKeyIds);
    const after = options.cursor
      ? (this.db
          .prepare<[string, string], { seq: number }>("SELECT seq FROM jobs WHERE id = ? AND api_key_id IN (SELECT value FROM json_each(?))")
          .get(options.cursor, keys)?.seq ?? 0)
      : Number.MAX_SAFE_INTEGER;
    const rows = this.db
      .prepare<[string, number, string | null, string | null, number], JobRow>(
        `SELECT * FROM jobs WHERE api_key_id IN (SELECT value FROM json_each(?)) AND seq < ? AND (? IS NULL OR status = ?)
         ORDER BY seq DESC LIMIT ?`,
      )
      .all(keys, after, options.status ?? null, options.status ?? null, options.limit + 1);
    const jobs = rows.slice(0, options.limit).map(fromRow);
    return { jobs, nextCursor: rows.length > options.limit ? jobs[jobs.length - 1]!.id : null };
  }

  async queueHeads(): Promise<QueueHead[]> {
    return this.db
      .prepare<[], { api_key_id: string; id: string }>(
        `SELECT api_key_id, id FROM jobs WHERE seq IN
           (SELECT min(seq) FROM jobs WHERE status = 'queued' GROUP BY api_key_id)
         ORDER BY seq`,
      )
      .all()
      .map((row) => ({ apiKeyId: row.api_key_id, jobId: row.id }));
  }

  async claim(id: string, nowMs: number): Promise<JobRecord | null> {
    const progress: JobProgress = { fraction: 0, step: 0, steps: 0, stage: "running" };
    const changed = this.db
      .prepare("UPDATE jobs SET status = 'running', started_at = ?, attempts = attempts + 1, progress = ? WHERE id = ? AND status = 'queued'")
      .run(nowMs, JSON.stringify(progress), id).changes;
    return changed === 1 ? this.getSync(id) : null;
  }

  async setProgress(id: string, progress: JobProgress): Promise<void> {
    this.db.prepare("UPDATE jobs SET progress = ? WHERE id = ? AND status = 'running'").run(JSON.stringify(progress), id);
  }

  async finish(id: string, outcome: JobOutcome, nowMs: number, resultExpiresAtMs: number): Promise<boolean> {
    const resultImages: ImagesToStore = (outcome.status === "succeeded" && outcome.images) || new Map();
    // The bytes first: a row never refers to a file not written yet.
    await this.blobs.write(id, resultImages);
    const job = this.getSync(id);
    const progress: JobProgress =
      outcome.status === "succeeded"
        ? { fraction: 1, step: job?.progress.steps ?? 0, steps: job?.progress.steps ?? 0, stage: "done" }
        : { ...(job?.progress ?? QUEUED_PROGRESS), stage: outcome.status };
    const images = new Map([...(job?.images ?? NO_IMAGES), ...storedOnly(resultImages)]);
    const finished =
      this.db
        .prepare(
          `UPDATE jobs SET status = ?, finished_at = ?, result = ?, error = ?, result_expires = ?, progress = ?, images = ?
           WHERE id = ? AND status IN ('queued', 'running')`,
        )
        .run(
          outcome.status,
          nowMs,
          outcome.status === "succeeded" ? JSON.stringify(outcome.result) : null,
          outcome.status === "succeeded" ? null : JSON.stringify(outcome.error),
          resultExpiresAtMs,
          JSON.stringify(progress),
          imagesJson(images),
          id,
        ).changes === 1;
    if (finished) await this.blobs.drop(id, "input");
    // Lost the race to another outcome: the bytes just written are nobody's.
    else await this.blobs.remove(id, [...resultImages.values()].map(({ image }) => image.blob));
    return finished;
  }

  async recover(maxAttempts: number, error: { status: number; body: PublicError }, nowMs: number) {
    const recovered = this.db.transaction(() => {
      const stale = this.db.prepare<[], { id: string; attempts: number }>("SELECT id, attempts FROM jobs WHERE status = 'running'").all();
      const requeued: string[] = [];
      const failed: string[] = [];
      for (const { id, attempts } of stale) {
        if (attempts < maxAttempts) {
          this.db.prepare("UPDATE jobs SET status = 'queued', progress = ? WHERE id = ?").run(JSON.stringify(QUEUED_PROGRESS), id);
          requeued.push(id);
        } else {
          this.db
            .prepare("UPDATE jobs SET status = 'failed', finished_at = ?, error = ?, result_expires = ? WHERE id = ?")
            .run(nowMs, JSON.stringify(error), nowMs, id);
          failed.push(id);
        }
      }
      return { requeued, failed };
    }).immediate();
    for (const id of recovered.failed) await this.blobs.drop(id, "input");
    return recovered;
  }

  async queuePosition(job: JobRecord): Promise<number> {
    const seq = this.db.prepare<[string], { seq: number }>("SELECT seq FROM jobs WHERE id = ?").get(job.id)?.seq ?? 0;
    const ahead = this.db
      .prepare<[string, number], { n: number }>("SELECT count(*) AS n FROM jobs WHERE api_key_id = ? AND status = 'queued' AND seq < ?")
      .get(job.apiKeyId, seq)!.n;
    // Keys take turns: each other key runs at most one job per turn before ours comes up.
    const others = this.db
      .prepare<[number, string], { n: number }>(
        `SELECT coalesce(sum(min(n, ?)), 0) AS n FROM
           (SELECT count(*) AS n FROM jobs WHERE status = 'queued' AND api_key_id <> ? GROUP BY api_key_id)`,
      )
      .get(ahead + 1, job.apiKeyId);
    return ahead + (others?.n ?? 0) + 1;
  }

  async appendEvent(jobId: string, type: JobEvent["type"], data: unknown): Promise<JobEvent> {
    const id = Number(this.db.prepare("INSERT INTO job_events (job_id, type, data) VALUES (?, ?, ?)").run(jobId, type, JSON.stringify(data)).lastInsertRowid);
    return { id, jobId, type, data };
  }

  async eventsAfter(jobId: string, afterId: number): Promise<JobEvent[]> {
    return this.db
      .prepare<[string, number], { id: number; type: JobEvent["type"]; data: string }>("SELECT id, type, data FROM job_events WHERE job_id = ? AND id > ? ORDER BY id")
      .all(jobId, afterId)
      .map((row) => ({ id: row.id, jobId, type: row.type, data: JSON.parse(row.data) as unknown }));
  }

  async idempotencyEntry(apiKeyId: string, key: string, notBeforeMs: number): Promise<IdempotencyEntry | null> {
    const row = this.db
      .prepare<[string, string, number], { fingerprint: string; job_id: string; created_at: number }>(
        "SELECT fingerprint, job_id, created_at FROM idempotency_keys WHERE api_key_id = ? AND key = ? AND created_at >= ?",
      )
      .get(apiKeyId, key, notBeforeMs);
    return row ? { apiKeyId, key, fingerprint: row.fingerprint, jobId: row.job_id, createdAtMs: row.created_at } : null;
  }

  async bindIdempotencyKey(entry: IdempotencyEntry): Promise<boolean> {
    return this.db.transaction(() => {
      // An expired binding is replaced; a live one wins.
      this.db.prepare("DELETE FROM idempotency_keys WHERE api_key_id = ? AND key = ? AND created_at < ?").run(entry.apiKeyId, entry.key, entry.createdAtMs - IDEMPOTENCY_WINDOW_MS);
      return (
        this.db
          .prepare("INSERT INTO idempotency_keys (api_key_id, key, fingerprint, job_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
          .run(entry.apiKeyId, entry.key, entry.fingerprint, entry.jobId, entry.createdAtMs).changes === 1
      );
    }).immediate();
  }

  async signingSecret(apiKeyId: string, create: () => string): Promise<string> {
    this.db.prepare("INSERT INTO webhook_secrets (api_key_id, secret) VALUES (?, ?) ON CONFLICT DO NOTHING").run(apiKeyId, create());
    return this.db.prepare<[string], { secret: string }>("SELECT secret FROM webhook_secrets WHERE api_key_id = ?").get(apiKeyId)!.secret;
  }

  async rotateSigningSecret(apiKeyId: string, secret: string): Promise<void> {
    this.db
      .prepare("INSERT INTO webhook_secrets (api_key_id, secret) VALUES (?, ?) ON CONFLICT (api_key_id) DO UPDATE SET secret = excluded.secret")
      .run(apiKeyId, secret);
  }

  async createDelivery(delivery: Omit<WebhookDelivery, "id" | "status" | "attempts">): Promise<void> {
    const images = await copyForDelivery(this.blobs, delivery.jobId, delivery.images);
    const created = this.db
      .prepare(
        `INSERT INTO webhook_deliveries (job_id, api_key_id, url, message_id, payload, status, created_at, next_attempt, attempts, images)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, '[]', ?) ON CONFLICT DO NOTHING`,
      )
      .run(delivery.jobId, delivery.apiKeyId, delivery.url, delivery.messageId, delivery.payload, delivery.createdAtMs, delivery.nextAttemptAtMs, imagesJson(images)).changes;
    if (created === 0) await this.blobs.remove(delivery.jobId, [...images.values()].map((image) => image.blob));
  }

  async dueDeliveries(nowMs: number, take: DueDeliveries): Promise<WebhookDelivery[]> {
    // A delivery's turn is its place in its key's line plus the key's deliveries in flight.
    return this.db
      .prepare<[string, number, number, number], DeliveryRow>(
        `WITH busy AS (SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.apiKeyId') AS api_key_id FROM json_each(?)),
         due AS (
           SELECT d.*, ROW_NUMBER() OVER (PARTITION BY d.api_key_id ORDER BY d.next_attempt, d.id)
                       + (SELECT count(*) FROM busy WHERE busy.api_key_id = d.api_key_id) AS turn
           FROM webhook_deliveries d
           WHERE d.status = 'pending' AND d.next_attempt <= ? AND d.id NOT IN (SELECT id FROM busy))
         SELECT * FROM due WHERE turn <= ? ORDER BY turn, next_attempt, id LIMIT ?`,
      )
      .all(JSON.stringify(take.inFlight), nowMs, take.perKeyLimit, take.limit)
      .map(deliveryFromRow);
  }

  async recordAttempt(id: number, attempt: WebhookAttempt, next: { status: WebhookDelivery["status"]; nextAttemptAtMs: number }): Promise<void> {
    this.db
      .prepare("UPDATE webhook_deliveries SET attempts = json_insert(attempts, '$[#]', json(?)), status = ?, next_attempt = ? WHERE id = ?")
      .run(JSON.stringify(attempt), next.status, next.nextAttemptAtMs, id);
    if (next.status === "pending") return;
    const jobId = this.db.prepare<[number], { job_id: string }>("SELECT job_id FROM webhook_deliveries WHERE id = ?").get(id)?.job_id;
    if (jobId !== undefined) await this.blobs.drop(jobId, "webhook");
  }

  async deliveryOf(jobId: string): Promise<WebhookDelivery | null> {
    const row = this.db.prepare<[string], DeliveryRow>("SELECT * FROM webhook_deliveries WHERE job_id = ?").get(jobId);
    return row ? deliveryFromRow(row) : null;
  }

  async releaseIdempotencyKey(apiKeyId: string, key: string, jobId: string): Promise<void> {
    this.db.prepare("DELETE FROM idempotency_keys WHERE api_key_id = ? AND key = ? AND job_id = ?").run(apiKeyId, key, jobId);
  }

  async purge(nowMs: number, recordsBeforeMs: number, idempotencyBeforeMs: number) {
    if (!this.sweptOrphans) {
      // Orphans come only from a crash, so the first purge after opening (at start-up) finds them all.
      this.sweptOrphans = true;
      const referenced = this.db.prepare<[string, string], { found: number }>(
        "SELECT 1 AS found FROM jobs WHERE id = ? UNION ALL SELECT 1 FROM webhook_deliveries WHERE job_id = ? LIMIT 1",
      );
      await this.blobs.sweep((id) => referenced.get(id, id) !== undefined, nowMs - ORPHAN_AGE_MS);
    }
    const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
    const gone = this.db.transaction(() => {
      const results = ids(this.db.prepare<[number], { id: string }>("SELECT id FROM jobs WHERE result IS NOT NULL AND result_expires <= ?").all(nowMs));
      this.db.prepare("UPDATE jobs SET result = NULL WHERE result IS NOT NULL AND result_expires <= ?").run(nowMs);
      this.db.prepare("DELETE FROM job_events WHERE job_id IN (SELECT id FROM jobs WHERE finished_at < ?)").run(recordsBeforeMs);
      const deliveries = this.db
        .prepare<[number], { id: string }>("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND job_id IN (SELECT id FROM jobs WHERE finished_at < ?) RETURNING job_id AS id")
        .all(recordsBeforeMs);
      const records = ids(this.db.prepare<[number], { id: string }>("DELETE FROM jobs WHERE finished_at < ? RETURNING id").all(recordsBeforeMs));
      this.db.prepare("DELETE FROM idempotency_keys WHERE created_at < ?").run(idempotencyBeforeMs);
      return { results, deliveries: ids(deliveries), records };
    }).immediate();
    // The bytes after the rows that referred to them.
    for (const id of gone.results) await this.blobs.drop(id, "result");
    for (const id of gone.deliveries) await this.blobs.drop(id, "webhook");
    for (const id of gone.records) {
      await this.blobs.drop(id, "input");
      await this.blobs.drop(id, "result");
    }
    return { results: gone.results.length, records: gone.records.length };
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

