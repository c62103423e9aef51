/**
 * The job resource of issue 16 (asynchronous requests). Written from the issue's text until the
 * served document describes jobs; the coverage test then holds the methods to the document.
 */
export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "canceled";

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ["succeeded", "failed", "canceled"];

export interface JobProgress {
  /** 0 to 1. */
  fraction?: number;
  step?: number;
  steps?: number;
  /** Name of the current stage, e.g. `denoise`. */
  stage?: string;
}

export interface JobError {
  code: string;
  message: string;
  requestId?: string;
  issues?: { path: string; message: string }[];
  /** The HTTP status the synchronous call would have answered; it picks the error's class. */
  status?: number;
}

export interface JobData {
  id: string;
  object: "job";
  /** The operation the job runs, as the server names it. */
  operation: string;
  status: JobStatus;
  createdAt?: string | number;
  startedAt?: string | number | null;
  finishedAt?: string | number | null;
  expiresAt?: string | number | null;
  progress?: JobProgress | null;
  queuePosition?: number | null;
  /** Exactly the synchronous response body, once succeeded. */
  result?: Record<string, unknown> | null;
  /** The synchronous error body and its HTTP status, once failed or canceled. */
  error?: JobError | null;
  [field: string]: unknown;
}

export interface JobList {
  data: JobData[];
  /** Cursor for the next page, when there is one. */
  nextCursor?: string | null;
  hasMore?: boolean;
  [field: string]: unknown;
}

/** One event of `GET /jobs/{id}/events`; `data` parsed from JSON where it is JSON. */
export interface JobEvent {
  id: string | undefined;
  /** `progress`, `status`, `result`, `error` ... as the server names them. */
  event: string;
  data: unknown;
}

export interface ListJobsParams {
  status?: JobStatus;
  cursor?: string;
  limit?: number;
}

/** The key's Standard Webhooks signing secret (`GET /api/v1/webhooks/secret`). */
export interface WebhookSecret {
  object: "webhook_secret";
  /** `whsec_...`: verify deliveries' `webhook-signature` with it. */
  secret: string;
  [field: string]: unknown;
}
