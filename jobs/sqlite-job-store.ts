/**
 * The embedded job queue: tables in `<dataDir>/jobs.db` (SQLite, WAL mode). Every state change is
 * one statement or one transaction, so a router that stops at any point leaves a consistent queue
 * that the next start recovers (see {@link JobStore.recover}).
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { PublicError } from "../core/errors.js";
import { QUEUED_PROGRESS, type JobProgress, type JobRecord, type JobStatus } from "./job-record.js";
import { IDEMPOTENCY_WINDOW_MS } from "./idempotency.js";
import type { IdempotencyEntry, InsertOutcome, WebhookAttempt, WebhookDelivery, JobEvent, JobListPage, JobOutcome, JobStore, LocalJobQueue, NewJob, QueueHead, QueueLimits } from "./job-store.js";

export const JOBS_DATABASE_FILE = "jobs.db";

/** Migration N takes the schema from version N to N+1 (`PRAGMA user_version`). Append, never edit. */
const MIGRATIONS: readonly string[] = [
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
];

function migrate(db: Database.Database): void {
  const run = db.transaction(() => {
    const current = db.pragma("user_version", { simple: true }) as number;
    if (current > MIGRATIONS.length) {
      throw new Error(`jobs schema is at version ${current}, newer than this build knows (${MIGRATIONS.length}); upgrade the service.`);
    }
    for (const migration of MIGRATIONS.slice(current)) db.exec(migration);
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
  };
}

export class SqliteJobStore implements JobStore, LocalJobQueue {
  private readonly db: Database.Database;

  constructor(dataDir: string) {
    fs.mkdirSync(dataDir, { recursive: true });
    this.db = new Database(path.join(dataDir, JOBS_DATABASE_FILE));
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    // Results are large (images as data URLs); NORMAL still survives a process crash in WAL mode.
    this.db.pragma("synchronous = NORMAL");
    migrate(this.db);
  }

  private readonly insertTx = (job: NewJob, limits: QueueLimits): InsertOutcome => {
    const active = this.db
      .prepare<[string], { n: number }>("SELECT count(*) AS n FROM jobs WHERE api_key_id = ? AND status IN ('queued', 'running')")
      .get(job.apiKeyId)!.n;
    if (active >= limits.maxActivePerKey) return { refused: "key" };
    const queued = this.db.prepare<[], { n: number }>("SELECT count(*) AS n FROM jobs WHERE status = 'queued'").get()!.n;
    if (queued >= limits.maxQueued) return { refused: "queue" };
    this.db
      .prepare(
        `INSERT INTO jobs (id, api_key_id, operation, input, request_id, status, created_at, progress, webhook_url)
         VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)`,
      )
      .run(job.id, job.apiKeyId, job.operation, JSON.stringify(job.input), job.requestId, job.createdAtMs, JSON.stringify(QUEUED_PROGRESS), job.webhookUrl);
    return { inserted: this.getSync(job.id)! };
  };

  async insert(job: NewJob, limits: QueueLimits): Promise<InsertOutcome> {
    return this.db.transaction(this.insertTx).immediate(job, limits);
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
    const job = this.getSync(id);
    const progress: JobProgress =
      outcome.status === "succeeded"
        ? { fraction: 1, step: job?.progress.steps ?? 0, steps: job?.progress.steps ?? 0, stage: "done" }
        : { ...(job?.progress ?? QUEUED_PROGRESS), stage: outcome.status };
    return (
      this.db
        .prepare(
          `UPDATE jobs SET status = ?, finished_at = ?, result = ?, error = ?, result_expires = ?, progress = ?
           WHERE id = ? AND status IN ('queued', 'running')`,
        )
        .run(
          outcome.status,
          nowMs,
          outcome.status === "succeeded" ? JSON.stringify(outcome.result) : null,
          outcome.status === "succeeded" ? null : JSON.stringify(outcome.error),
          resultExpiresAtMs,
          JSON.stringify(progress),
          id,
        ).changes === 1
    );
  }

  async recover(maxAttempts: number, error: { status: number; body: PublicError }, nowMs: number) {
    return this.db.transaction(() => {
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
    this.db
      .prepare(
        `INSERT INTO webhook_deliveries (job_id, api_key_id, url, message_id, payload, status, created_at, next_attempt, attempts)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, '[]') ON CONFLICT DO NOTHING`,
      )
      .run(delivery.jobId, delivery.apiKeyId, delivery.url, delivery.messageId, delivery.payload, delivery.createdAtMs, delivery.nextAttemptAtMs);
  }

  async dueDeliveries(nowMs: number, limit: number): Promise<WebhookDelivery[]> {
    return this.db
      .prepare<[number, number], DeliveryRow>("SELECT * FROM webhook_deliveries WHERE status = 'pending' AND next_attempt <= ? ORDER BY next_attempt LIMIT ?")
      .all(nowMs, limit)
      .map(deliveryFromRow);
  }

  async recordAttempt(id: number, attempt: WebhookAttempt, next: { status: WebhookDelivery["status"]; nextAttemptAtMs: number }): Promise<void> {
    this.db
      .prepare("UPDATE webhook_deliveries SET attempts = json_insert(attempts, '$[#]', json(?)), status = ?, next_attempt = ? WHERE id = ?")
      .run(JSON.stringify(attempt), next.status, next.nextAttemptAtMs, id);
  }

  async deliveryOf(jobId: string): Promise<WebhookDelivery | null> {
    const row = this.db.prepare<[string], DeliveryRow>("SELECT * FROM webhook_deliveries WHERE job_id = ?").get(jobId);
    return row ? deliveryFromRow(row) : null;
  }

  async releaseIdempotencyKey(apiKeyId: string, key: string, jobId: string): Promise<void> {
    this.db.prepare("DELETE FROM idempotency_keys WHERE api_key_id = ? AND key = ? AND job_id = ?").run(apiKeyId, key, jobId);
  }

  async purge(nowMs: number, recordsBeforeMs: number, idempotencyBeforeMs: number) {
    return this.db.transaction(() => {
      const results = this.db.prepare("UPDATE jobs SET result = NULL WHERE result IS NOT NULL AND result_expires <= ?").run(nowMs).changes;
      this.db.prepare("DELETE FROM job_events WHERE job_id IN (SELECT id FROM jobs WHERE finished_at < ?)").run(recordsBeforeMs);
      this.db.prepare("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND job_id IN (SELECT id FROM jobs WHERE finished_at < ?)").run(recordsBeforeMs);
      const records = this.db.prepare("DELETE FROM jobs WHERE finished_at < ?").run(recordsBeforeMs).changes;
      this.db.prepare("DELETE FROM idempotency_keys WHERE created_at < ?").run(idempotencyBeforeMs);
      return { results, records };
    }).immediate();
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
