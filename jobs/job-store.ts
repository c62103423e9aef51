/**
 * What the job queue needs from storage. Async so a networked backend can implement the same
 * contract as the embedded SQLite one (sqlite-job-store.ts).
 */
import type { PublicError } from "../core/errors.js";
import type { BlobReader, BlobRef, ImagesToStore, StoredImages } from "./job-images.js";
import { QUEUED_PROGRESS, type JobProgress, type JobRecord, type JobStatus, type WebhookAttempt, type WebhookDelivery } from "./job-record.js";

export type { WebhookAttempt, WebhookDelivery };

export interface NewJob {
  id: string;
  apiKeyId: string;
  operation: string;
  /** The request body, its long data URLs replaced by the stand-ins of `images`. */
  input: unknown;
  /** The request's data URLs, stored as bytes beside the record (job-images.ts). */
  images?: ImagesToStore;
  requestId: string;
  webhookUrl: string | null;
  createdAtMs: number;
}

/**
 * What both stores write first of a new job, in this order: id, key, operation, input JSON, request
 * id, creation time and progress JSON (queued).
 */
export function newJobValues(job: NewJob): [string, string, string, string, string, number, string] {
  return [job.id, job.apiKeyId, job.operation, JSON.stringify(job.input), job.requestId, job.createdAtMs, JSON.stringify(QUEUED_PROGRESS)];
}

export interface QueueLimits {
  maxActivePerKey: number;
  maxQueued: number;
}

/** Inserted, or refused because the key or the whole queue is full. */
export type InsertOutcome = { inserted: JobRecord } | { refused: "key" | "queue" };

export type JobOutcome =
  /** `images`: the result's images, stored as bytes; `result` holds their stand-ins. */
  | { status: "succeeded"; result: unknown; images?: ImagesToStore }
  | { status: "failed" | "canceled"; error: { status: number; body: PublicError } };

/** The oldest queued job of one key. */
export interface QueueHead {
  apiKeyId: string;
  jobId: string;
}

/** One Server-Sent Event of a job, numbered in order across the store. */
export interface JobEvent {
  id: number;
  jobId: string;
  type: "status" | "progress" | "result" | "error";
  data: unknown;
}

/** What one `Idempotency-Key` is bound to. */
export interface IdempotencyEntry {
  apiKeyId: string;
  key: string;
  /** SHA-256 of the operation and body. */
  fingerprint: string;
  jobId: string;
  createdAtMs: number;
}

export interface JobListPage {
  jobs: JobRecord[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

/**
 * Which due deliveries a caller takes: keys take turns (every key's oldest due delivery before any
 * key's second, a key with deliveries in flight later by as many), so one key's slow receivers
 * never keep another key's deliveries waiting.
 */
export interface DueDeliveries {
  /** Most deliveries handed out. */
  limit: number;
  /** Most deliveries of one key in flight at once, those in `inFlight` included. */
  perKeyLimit: number;
  /** The caller's deliveries being attempted: never handed out again, and counted against their key. */
  inFlight: readonly { id: number; apiKeyId: string }[];
}

export interface JobStore {
  /** Inserts a queued job unless the key or the queue is at its limit (checked atomically). */
  insert(job: NewJob, limits: QueueLimits): Promise<InsertOutcome>;
  get(id: string): Promise<JobRecord | null>;
  /** The bytes of one of the job's stored images (JobRecord.images, WebhookDelivery.images); null once deleted. */
  readImage(jobId: string, blob: BlobRef): Promise<Buffer | null>;
  /** A reader of one of the job's stored images, for answers that write it out a chunk at a time; null once deleted. */
  imageReader(jobId: string, blob: BlobRef): Promise<BlobReader | null>;
  /** The key's jobs, newest first. `cursor` is the last id of the previous page. */
  list(apiKeyId: string, options: { status?: JobStatus; cursor?: string; limit: number }): Promise<JobListPage>;
  /**
   * The jobs of any of these keys (one console user's keys), newest first in one sequence, paged as
   * {@link list}: `cursor` is the last id of the previous page, and an id of no listed key ends it.
   */
  listForKeys(apiKeyIds: string[], options: { status?: JobStatus; cursor?: string; limit: number }): Promise<JobListPage>;
  setProgress(id: string, progress: JobProgress): Promise<void>;
  /**
   * Records the outcome of a queued or running job (and drops its request's image bytes: a finished
   * job never runs again); false when it had already finished.
   */
  finish(id: string, outcome: JobOutcome, nowMs: number, resultExpiresAtMs: number): Promise<boolean>;
  /** Queued jobs that will run before this one when keys take turns (1 = next). */
  queuePosition(job: JobRecord): Promise<number>;
  appendEvent(jobId: string, type: JobEvent["type"], data: unknown): Promise<JobEvent>;
  /** The job's events with an id above `afterId`, in order. */
  eventsAfter(jobId: string, afterId: number): Promise<JobEvent[]>;
  idempotencyEntry(apiKeyId: string, key: string, notBeforeMs: number): Promise<IdempotencyEntry | null>;
  /** Binds the key to the job unless it is bound already; false when it was. */
  bindIdempotencyKey(entry: IdempotencyEntry): Promise<boolean>;
  /** Unbinds the key from the job (its submission failed). */
  releaseIdempotencyKey(apiKeyId: string, key: string, jobId: string): Promise<void>;
  /** The key's webhook signing secret, made with `create` on first use. */
  signingSecret(apiKeyId: string, create: () => string): Promise<string>;
  /** Replaces the key's signing secret. */
  rotateSigningSecret(apiKeyId: string, secret: string): Promise<void>;
  /** Stores a pending delivery; `images` refer to the job's result images, of which the delivery gets its own copy. */
  createDelivery(delivery: Omit<WebhookDelivery, "id" | "status" | "attempts">): Promise<void>;
  /**
   * Pending deliveries whose next attempt is due, taken fairly (see {@link DueDeliveries}). A store
   * shared by several routers hands each one to a single caller (for long enough to attempt it), so
   * exactly one router delivers it.
   */
  dueDeliveries(nowMs: number, take: DueDeliveries): Promise<WebhookDelivery[]>;
  /** Records an attempt; a delivery that is no longer pending loses its images' bytes. */
  recordAttempt(id: number, attempt: WebhookAttempt, next: { status: WebhookDelivery["status"]; nextAttemptAtMs: number }): Promise<void>;
  /** The job's webhook delivery, if it has one. */
  deliveryOf(jobId: string): Promise<WebhookDelivery | null>;
  /**
   * Drops results past their expiry and records (with their events) finished before `recordsBeforeMs`,
   * with their images' bytes.
   */
  purge(nowMs: number, recordsBeforeMs: number, idempotencyBeforeMs: number): Promise<{ results: number; records: number }>;
  close(): Promise<void>;
}

/**
 * The embedded queue's scheduling (local-job-scheduler.ts): one router claims the heads it picks
 * and, when it starts, recovers the jobs it left running. A shared queue schedules through BullMQ
 * instead (bullmq-job-scheduler.ts).
 */
export interface LocalJobQueue {
  /** The oldest queued job of every key that has one. */
  queueHeads(): Promise<QueueHead[]>;
  /** Marks a queued job running; null when another runner took it or it was canceled. */
  claim(id: string, nowMs: number): Promise<JobRecord | null>;
  /**
   * Jobs left `running` by a runner that stopped: requeued when they have been tried fewer than
   * `maxAttempts` times, else failed with `error`. Returns the ids of both groups.
   */
  recover(maxAttempts: number, error: { status: number; body: PublicError }, nowMs: number): Promise<{ requeued: string[]; failed: string[] }>;
}
