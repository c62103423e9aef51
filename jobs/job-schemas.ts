/** The jobs API's response shapes, for the OpenAPI document (jobs/openapi-jobs.ts). */
import { z } from "zod";
import { ERROR_KINDS, type ErrorCode } from "../core/errors.js";
import { JOB_STATUSES } from "./job-record.js";

const ERROR_CODES = Object.keys(ERROR_KINDS) as [ErrorCode, ...ErrorCode[]];

const publicErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  requestId: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  status: z.int().meta({ description: "The HTTP status the synchronous call would have answered with this body." }),
});

const attemptSchema = z.object({
  at: z.string().meta({ description: "When the attempt was made (ISO 8601)." }),
  statusCode: z.int().nullable().meta({ description: "The receiver's HTTP status; null when no answer came." }),
  error: z.string().nullable().meta({ description: "Why the attempt failed, when it did." }),
});

export const jobSchema = z
  .object({
    id: z.string().meta({ description: "Job id, `job_` and 16 characters.", example: "job_3q2xv0aAT8m1b7KpZk9dWw" }),
    object: z.literal("job"),
    operation: z.string().meta({ description: "The operation the job runs: its REST path without `/v1/`, e.g. `generate`, `tools/upscale`." }),
    status: z.enum(JOB_STATUSES).meta({ description: "`queued`, `running`, then `succeeded`, `failed` or `canceled`." }),
    createdAt: z.string().meta({ description: "When the job was submitted (ISO 8601)." }),
    startedAt: z.string().nullable().meta({ description: "When it last started running; null while queued." }),
    finishedAt: z.string().nullable().meta({ description: "When it finished; null until then." }),
    progress: z
      .object({
        fraction: z.number().min(0).max(1).meta({ description: "Share of the work done, 0 to 1." }),
        step: z.int().meta({ description: "Steps (diffusion steps) done." }),
        steps: z.int().meta({ description: "Steps in all; 0 when the operation reports no steps." }),
        stage: z.string().meta({ description: "`queued`, `running`, `denoising`, `done`, `failed` or `canceled`." }),
      })
      .meta({ description: "How far the job has come." }),
    queuePosition: z.int().min(1).optional().meta({ description: "While queued: about how many jobs run before it (1 = next); keys take turns." }),
    result: z.record(z.string(), z.unknown()).optional().meta({ description: "Once succeeded, until purged: exactly the synchronous response body." }),
    error: publicErrorSchema.optional().meta({ description: "Once failed or canceled: the synchronous error body, and `status`, the HTTP status the synchronous call would have answered." }),
    expiresAt: z.string().nullable().meta({ description: "When the result is deleted (ATELIER_JOB_RESULT_RETENTION_HOURS after it finished)." }),
    webhook: z
      .object({
        url: z.string(),
        status: z.enum(["waiting", "pending", "delivered", "failed"]).meta({ description: "`waiting` until the job finishes, `pending` while retried." }),
        attempts: z.array(attemptSchema),
      })
      .optional()
      .meta({ description: "Present when the request named a `webhookUrl`: the delivery and every attempt." }),
  })
  .meta({ description: "A request running in the background." });

export const jobListSchema = z
  .object({
    object: z.literal("list"),
    data: z.array(jobSchema).meta({ description: "The caller's jobs, newest first (without `result`; fetch a job for it)." }),
    hasMore: z.boolean(),
    nextCursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last." }),
  })
  .meta({ description: "One page of the caller's jobs." });

export const webhookSecretSchema = z
  .object({
    object: z.literal("webhook_secret"),
    secret: z.string().meta({ description: "The key's Standard Webhooks signing secret (`whsec_` + base64).", example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
  })
  .meta({ description: "The signing secret of the calling key's webhooks." });

export const webhookEventSchema = z
  .object({
    type: z.enum(["job.succeeded", "job.failed", "job.canceled"]),
    timestamp: z.string().meta({ description: "When the event was made (ISO 8601)." }),
    data: jobSchema,
  })
  .meta({ description: "Sent with `webhook-id`, `webhook-timestamp` and `webhook-signature` (Standard Webhooks, HMAC-SHA256)." });

/** The schemas above under their component names, for `z.toJSONSchema`. */
export const jobComponentSchemas = z.registry<{ id: string }>();
jobComponentSchemas.add(jobSchema, { id: "Job" });
jobComponentSchemas.add(jobListSchema, { id: "JobList" });
jobComponentSchemas.add(webhookSecretSchema, { id: "WebhookSecret" });
jobComponentSchemas.add(webhookEventSchema, { id: "WebhookEvent" });
