/**
 * A job: one POST operation run in the background for one API key. The record is what the store
 * keeps; {@link publicJob} is the `object: "job"` body clients see.
 */
import type { PublicError } from "../core/errors.js";
import type { StoredImages } from "./job-images.js";
import type { JobError, JobProgress, JobStatus, PublicJob, WebhookAttempt } from "./job-schemas.js";

// The shapes clients see are job-schemas.ts's; the record's readers take them from here with it.
export { JOB_STATUSES, type JobProgress, type JobStatus, type PublicJob, type WebhookAttempt } from "./job-schemas.js";

export interface WebhookDelivery {
  id: number;
  jobId: string;
  apiKeyId: string;
  url: string;
  /** `webhook-id`: the same on every retry, so receivers can drop duplicates. */
  messageId: string;
  /** The body sent, its images' data URLs replaced by the stand-ins of `images`. */
  payload: string;
  /** The payload's images, the delivery's own copy of the result's (so a purged result leaves them). */
  images: StoredImages;
  /** `pending` until a 2xx (`delivered`), a refusal or the retry window's end (`failed`). */
  status: "pending" | "delivered" | "failed";
  createdAtMs: number;
  nextAttemptAtMs: number;
  attempts: WebhookAttempt[];
}

export function isFinished(status: JobStatus): boolean {
  return status === "succeeded" || status === "failed" || status === "canceled";
}

export interface JobRecord {
  id: string;
  /** The API key that submitted the job; no other key can see it. */
  apiKeyId: string;
  /** REST path of the operation, e.g. `/v1/generate`. */
  operation: string;
  /** The request body exactly as submitted (validated already), its data URLs replaced by stand-ins of `images`. */
  input: unknown;
  /** `X-Request-Id` of the submitting request; the result's `id`. */
  requestId: string;
  status: JobStatus;
  /** Times the job was started (a runner that died counts). */
  attempts: number;
  createdAtMs: number;
  startedAtMs: number | null;
  finishedAtMs: number | null;
  progress: JobProgress;
  /** The synchronous response body, once succeeded and until purged, its images replaced by stand-ins of `images`. */
  result: unknown;
  /**
   * The images of `input` and `result`, stored as bytes beside the record (job-images.ts), by the
   * stand-in that takes their place. Empty for a record stored with its images inline.
   */
  images: StoredImages;
  /** The synchronous error body and its HTTP status, once failed or canceled. */
  error: { status: number; body: PublicError } | null;
  /** When the result is purged, in ms; set when the job finishes. */
  resultExpiresAtMs: number | null;
  webhookUrl: string | null;
}

export const QUEUED_PROGRESS: JobProgress = { fraction: 0, step: 0, steps: 0, stage: "queued" };

/** The REST operation's name for humans: `/v1/tools/upscale` is `tools/upscale`. */
export function operationName(restPath: string): string {
  return restPath.replace(/^\/v1\//, "");
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * A failed or canceled job's error as clients see it: the synchronous error body plus the HTTP
 * status the synchronous call would have answered, so clients raise the same typed error for a job
 * as for the call itself without a second copy of the error table.
 */
export function publicJobError(error: NonNullable<JobRecord["error"]>): JobError {
  return { ...error.body, status: error.status };
}

/** The job as clients see it; a result's images are still stand-ins of `job.images`, written out from their bytes (facade/jobs-routes.ts, webhooks). */
export function publicJob(job: JobRecord, queuePosition?: number, delivery?: WebhookDelivery | null): PublicJob {
  return {
    id: job.id,
    object: "job",
    operation: operationName(job.operation),
    status: job.status,
    createdAt: iso(job.createdAtMs)!,
    startedAt: iso(job.startedAtMs),
    finishedAt: iso(job.finishedAtMs),
    progress: job.progress,
    ...(job.status === "queued" && queuePosition !== undefined ? { queuePosition } : {}),
    // The result is the synchronous body, an object, as stored.
    ...(job.status === "succeeded" && job.result !== null ? { result: job.result as Record<string, unknown> } : {}),
    ...(job.error ? { error: publicJobError(job.error) } : {}),
    expiresAt: iso(job.resultExpiresAtMs),
    ...(job.webhookUrl
      ? { webhook: { url: job.webhookUrl, status: delivery?.status ?? "waiting", attempts: delivery?.attempts ?? [] } }
      : {}),
  };
}
