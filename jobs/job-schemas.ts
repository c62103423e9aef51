/**
 * The jobs API's shapes, once, as zod schemas: what the jobs routes check (the list's query, a job's
 * id, the event stream's query, a request's `webhookUrl`) and what the jobs feature sends (a job, a
 * page of jobs, the signing secret, the event stream's data, a webhook's body and its signature
 * headers). The jobs code builds its answers with the types inferred from them, and the OpenAPI
 * document's jobs and webhook parts are generated from them (openapi-jobs.ts), so what is checked,
 * what is sent and what is documented cannot drift apart.
 */
import { z } from "zod";
import { errorSchema } from "../contract/error-schema.js";

export const JOB_STATUSES = ["queued", "running", "succeeded", "failed", "canceled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A job's id, as the paths take it. */
const jobIdSchema = z.string().meta({ param: { description: "The job's id.", example: "job_3q2xv0aAT8m1b7KpZk9dWw" } });

/** How far a job has come. `step`/`steps` count diffusion steps or tiles. */
export const jobProgressSchema = z.strictObject({
  fraction: z.number().min(0).max(1).meta({ description: "Share of the work done, 0 to 1." }),
  step: z.int().meta({ description: "Steps (diffusion steps) done." }),
  steps: z.int().meta({ description: "Steps in all; 0 when the operation reports no steps." }),
  stage: z.string().meta({ description: "`queued`, `running`, `denoising`, `done`, `failed` or `canceled`." }),
});
export type JobProgress = z.output<typeof jobProgressSchema>;

/** One try at delivering a job's webhook. */
export const webhookAttemptSchema = z.strictObject({
  at: z.string().meta({ description: "When the attempt was made (ISO 8601)." }),
  statusCode: z.int().nullable().meta({ description: "The receiver's HTTP status; null when no answer came." }),
  error: z.string().nullable().meta({ description: "Why the attempt failed, when it did." }),
});
export type WebhookAttempt = z.output<typeof webhookAttemptSchema>;

/** A failed or canceled job's error: the synchronous error body and the HTTP status the synchronous call would have answered. */
export const jobErrorSchema = z.strictObject({
  ...errorSchema.shape,
  status: z.int().meta({ description: "The HTTP status the synchronous call would have answered with this body." }),
});
export type JobError = z.output<typeof jobErrorSchema>;

// The shapes Atelier sends are strict objects: rendered for a request (the webhook's body stands where
// OpenAPI has one) as for a response, so the document has one `Job`, without unknown fields.
export const jobSchema = z
  .strictObject({
    id: z.string().meta({ description: "Job id, `job_` and 16 characters.", example: "job_3q2xv0aAT8m1b7KpZk9dWw" }),
    object: z.literal("job"),
    operation: z.string().meta({ description: "The operation the job runs: its REST path without `/v1/`, e.g. `generate`, `tools/upscale`." }),
    status: z.enum(JOB_STATUSES).meta({ description: "`queued`, `running`, then `succeeded`, `failed` or `canceled`." }),
    createdAt: z.string().meta({ description: "When the job was submitted (ISO 8601)." }),
    startedAt: z.string().nullable().meta({ description: "When it last started running; null while queued." }),
    finishedAt: z.string().nullable().meta({ description: "When it finished; null until then." }),
    progress: jobProgressSchema.meta({ description: "How far the job has come." }),
    queuePosition: z.int().min(1).optional().meta({ description: "While queued: about how many jobs run before it (1 = next); keys take turns." }),
    result: z.record(z.string(), z.unknown()).optional().meta({ description: "Once succeeded, until purged: exactly the synchronous response body." }),
    error: jobErrorSchema.optional().meta({ description: "Once failed or canceled: the synchronous error body, and `status`, the HTTP status the synchronous call would have answered." }),
    expiresAt: z.string().nullable().meta({ description: "When the result is deleted (ATELIER_JOB_RESULT_RETENTION_HOURS after it finished)." }),
    webhook: z
      .strictObject({
        url: z.string(),
        status: z.enum(["waiting", "pending", "delivered", "failed"]).meta({ description: "`waiting` until the job finishes, `pending` while retried." }),
        attempts: z.array(webhookAttemptSchema),
      })
      .optional()
      .meta({ description: "Present when the request named a `webhookUrl`: the delivery and every attempt." }),
  })
  .meta({ id: "Job", description: "A request running in the background." });
/** The job as clients see it (job-record.ts `publicJob`). */
export type PublicJob = z.output<typeof jobSchema>;

export const jobListSchema = z
  .strictObject({
    object: z.literal("list"),
    data: z.array(jobSchema).meta({ description: "The caller's jobs, newest first (without `result`; fetch a job for it)." }),
    hasMore: z.boolean(),
    nextCursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last." }),
  })
  .meta({ id: "JobList", description: "One page of the caller's jobs." });
export type JobList = z.output<typeof jobListSchema>;

export const webhookSecretSchema = z
  .strictObject({
    object: z.literal("webhook_secret"),
    secret: z.string().meta({ description: "The key's Standard Webhooks signing secret (`whsec_` + base64).", example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
  })
  .meta({ id: "WebhookSecret", description: "The signing secret of the calling key's webhooks." });
export type WebhookSecret = z.output<typeof webhookSecretSchema>;

export const webhookEventSchema = z
  .strictObject({
    type: z.enum(["job.succeeded", "job.failed", "job.canceled"]),
    timestamp: z.string().meta({ description: "When the event was made (ISO 8601)." }),
    data: jobSchema,
  })
  .meta({ id: "WebhookEvent", description: "Sent with `webhook-id`, `webhook-timestamp` and `webhook-signature` (Standard Webhooks, HMAC-SHA256)." });
export type WebhookEvent = z.output<typeof webhookEventSchema>;

/** The Standard Webhooks headers every delivery is signed with (webhooks/webhook-signature.ts). */
export const webhookSignatureHeadersSchema = z.object({
  "webhook-id": z.string().meta({ param: { description: "`msg_<job id>`; the same on every retry." } }),
  "webhook-timestamp": z.string().meta({ param: { description: "Unix time in seconds of this attempt." } }),
  "webhook-signature": z.string().meta({ param: { description: "`v1,<base64 HMAC-SHA256>`." } }),
});
export type WebhookSignatureHeaders = z.output<typeof webhookSignatureHeadersSchema>;

/** The `webhookUrl` a POST operation may name (the address policy is checked apart, job-submission.ts). */
export const webhookUrlSchema = z
  .string({ error: "Expected an http(s) URL for webhookUrl" })
  .max(2048, { error: "Expected webhookUrl of at most 2048 characters" })
  .refine((value) => /^https?:$/.test(URL.parse(value)?.protocol ?? ""), { error: "Expected an http:// or https:// URL for webhookUrl" })
  .meta({
    // The refinement above is what `uri` says here; JSON Schema cannot express it otherwise.
    format: "uri",
    description: "Beyond the spec: an http(s) URL to POST the finished job to (see the callback). Makes the request a job (202) unless `Prefer: wait` is sent.",
  });

/** `GET /v1/jobs`'s query. */
export const jobListQuerySchema = z.strictObject({
  status: z
    .enum(JOB_STATUSES, { error: `Expected one of ${JOB_STATUSES.join(", ")} for status` })
    .optional()
    .meta({ param: { description: "Only jobs in this status." } }),
  cursor: z.string().max(100).optional().meta({ param: { description: "`nextCursor` of the previous page." } }),
  limit: z.coerce.number({ error: "Expected integer between 1 and 100 for limit" }).int().min(1).max(100).default(20).meta({ param: { description: "Jobs per page, 1 to 100." } }),
});

/** The path of a job's own routes: `/v1/jobs/{id}...`. */
export const jobPathSchema = z.object({ id: jobIdSchema });

/** What `GET /v1/jobs/{id}/events` takes besides `lastEventId` (read on its own, as the `Last-Event-ID` header's stand-in). */
export const jobEventsQuerySchema = z.object({
  include: z
    .enum(["result"], { error: "Expected result for include" })
    .optional()
    .meta({ param: { description: "`result`: the `result` event carries the synchronous body too, as `result` (an image operation's image as a data URL, megabytes of base64)." } }),
});

/** The data of each kind of event on a job's event stream (Server-Sent Events, `event: <kind>`). */
export const jobEventDataSchemas = {
  status: z.strictObject({ status: z.enum(JOB_STATUSES) }).meta({ description: "`queued`, `running`, then the final status." }),
  progress: jobProgressSchema.meta({ description: "How far the job has come." }),
  result: z
    .strictObject({
      status: z.literal("succeeded"),
      jobUrl: z.string().meta({ description: "The job: `/api/v1/jobs/{id}`." }),
      resultUrl: z.string().meta({ description: "Its result: `/api/v1/jobs/{id}/result`." }),
      result: jobSchema.shape.result
        .unwrap()
        .nullable()
        .optional()
        .meta({ description: "With `?include=result`: the synchronous body (an image operation's image as a data URL); null once purged." }),
    })
    .meta({ description: "Where the result is; the last event of a succeeded job." }),
  error: jobErrorSchema.meta({ description: "The error body with the synchronous call's HTTP `status`; the last event of a failed or canceled job." }),
};
export type JobEventType = keyof typeof jobEventDataSchemas;
export type JobEventData = { [Type in JobEventType]: z.output<(typeof jobEventDataSchemas)[Type]> };
