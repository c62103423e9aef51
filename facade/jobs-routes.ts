/**
 * The jobs API over HTTP. Two parts, mounted by facade/app.ts:
 * - {@link jobSubmissions} sees every POST operation after its body is parsed: with
 *   `Prefer: respond-async` or `wait=N`, an `Idempotency-Key` or a `webhookUrl` the request becomes a
 *   job; with `Accept: image/*` an image operation answers raw bytes; anything else passes through
 *   untouched to the synchronous path. What becomes of a job request (its key, webhook, checks,
 *   idempotency, charge and how long to wait) is the job service's (jobs/job-service.ts `accept`);
 *   this module reads the headers and writes the answer.
 * - {@link jobRoutes}: `GET /v1/jobs`, `GET|DELETE /v1/jobs/{id}`, `GET /v1/jobs/{id}/result` and
 *   `GET /v1/jobs/{id}/events` (Server-Sent Events).
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { AtelierError, asAtelierError } from "../core/errors.js";
import { httpHeadersOf } from "../server/http-error-meta.js";
import type { AtelierServices, RequestContext } from "../server/context.js";
import type { OutputFormatName } from "../contract/field-schemas.js";
import { idempotencyKeyOf } from "../jobs/idempotency.js";
import { identify } from "../jobs/job-access.js";
import { parseOrThrow } from "../jobs/job-submission.js";
import { JOB_OPERATIONS, type JobOperation } from "../jobs/job-operations.js";
import { isFinished, publicJob, type JobRecord } from "../jobs/job-record.js";
import { jobEventsQuerySchema, jobListQuerySchema, jobPathSchema, type JobEventData, type JobList, type WebhookSecret } from "../jobs/job-schemas.js";
import type { JobService } from "../jobs/job-service.js";
import type { JobEvent } from "../jobs/job-store.js";
import { jsonPieces, writePieces } from "../jobs/json-pieces.js";
import { OpenStreams, type StreamKind } from "../jobs/open-streams.js";
import { parsePrefer, type Preferences } from "../jobs/prefer-header.js";
import { negotiateRawFormat } from "../jobs/raw-image.js";
import { sendError } from "./error-responses.js";
import { NO_STORE } from "./no-store.js";
import { answerRawImages, sendImage, sendJson } from "./result-responses.js";

type ContextFor = (services: AtelierServices, req: Request, res: Response) => RequestContext;

export const JOBS_PATH = "/v1/jobs";
/** The caller's webhook signing secret: GET shows it (made on first use), POST replaces it. */
export const WEBHOOK_SECRET_PATH = "/v1/webhooks/secret";

/** Location of a job, as sent in `Location` and documented. */
export function jobLocation(id: string): string {
  return `/api${JOBS_PATH}/${id}`;
}

function fail(res: Response, services: AtelierServices, error: unknown): void {
  const failure = asAtelierError(error);
  if (failure.code === "INTERNAL") services.logger.error({ err: failure.cause ?? failure }, "jobs request failed");
  if (res.headersSent) {
    res.end();
    return;
  }
  sendError(res, failure);
}

const resultGone = (job: JobRecord) => new AtelierError("RESULT_GONE", `The result of job ${job.id} was deleted after the retention period (ATELIER_JOB_RESULT_RETENTION_HOURS).`);

/** A succeeded job's result, its images read from the store a chunk at a time: raw (the first image) or as JSON. */
async function sendResult(res: Response, jobs: JobService, job: JobRecord, raw: boolean): Promise<void> {
  const images = await jobs.resultImages(job);
  if (job.result === null || images === null) throw resultGone(job);
  if (raw) await sendImage(res, job.result, images);
  else await sendJson(res, 200, job.result, images);
}

/** The job as JSON, its result's images read from the store a chunk at a time. */
async function sendView(res: Response, jobs: JobService, job: JobRecord, status: number): Promise<void> {
  const { view, images } = await jobs.viewWithImages(job);
  await sendJson(res, status, view, images);
}

/** A finished job's synchronous answer: its body (raw when asked) or its error. */
async function sendOutcome(res: Response, jobs: JobService, job: JobRecord, rawFormat: OutputFormatName | undefined): Promise<void> {
  if (job.status === "succeeded") return sendResult(res, jobs, job, rawFormat !== undefined);
  const error = job.error!;
  const retryAfter = httpHeadersOf(new AtelierError(error.body.code, error.body.message))["Retry-After"];
  if (retryAfter) res.setHeader("Retry-After", retryAfter);
  res.status(error.status).json(error.body);
}

/** The answer to a POST that became a job, after waiting as long as preferred. */
async function answerJob(
  res: Response,
  jobs: JobService,
  job: JobRecord,
  preferences: Preferences,
  waitMs: number,
  rawFormat: OutputFormatName | undefined,
  signal: AbortSignal,
): Promise<void> {
  const current = await jobs.waitFor(job, waitMs, signal);
  if (signal.aborted) return;
  const applied = [
    ...(preferences.respondAsync ? ["respond-async"] : []),
    ...(preferences.waitSeconds !== undefined ? [`wait=${Math.round(waitMs / 1000)}`] : []),
  ];
  if (applied.length > 0) res.setHeader("Preference-Applied", applied.join(", "));
  // respond-async alone asks for the job, not the result, even when it is already done.
  const wantsResult = !preferences.respondAsync || preferences.waitSeconds !== undefined;
  if (wantsResult && isFinished(current.status)) return sendOutcome(res, jobs, current, rawFormat);
  res.setHeader("Location", jobLocation(current.id));
  await sendView(res, jobs, current, 202);
}

/** Interprets job-related headers on POST operations; everything else goes on unchanged. */
export function jobSubmissions(services: AtelierServices, jobs: JobService, contextFor: ContextFor): RequestHandler {
  const submit = async (req: Request, res: Response, next: NextFunction, operation: JobOperation) => {
    const preferences = parsePrefer(req.headers.prefer);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const idempotencyKey = idempotencyKeyOf(req.get("idempotency-key"));
    const hasWebhook = Object.hasOwn(body, "webhookUrl");
    const requestedFormat = typeof body.outputFormat === "string" ? (body.outputFormat as OutputFormatName) : undefined;
    const rawFormat = operation.returnsImages ? negotiateRawFormat(req.get("accept"), requestedFormat) : undefined;
    if (rawFormat && requestedFormat === undefined) body.outputFormat = rawFormat;
    const asJob = preferences.respondAsync || preferences.waitSeconds !== undefined || idempotencyKey !== undefined || hasWebhook;
    if (!asJob) {
      if (rawFormat) answerRawImages(res);
      return next();
    }

    const ctx = contextFor(services, req, res);
    const { job, waitMs, preferences: applied } = await jobs.accept({ operation, body, preferences, idempotencyKey, ctx });
    return answerJob(res, jobs, job, applied, waitMs, rawFormat, ctx.signal);
  };

  return (req, res, next) => {
    if (req.method !== "POST") return next();
    const operation = JOB_OPERATIONS.get(req.path.replace(/\/+$/, ""));
    if (!operation) return next();
    submit(req, res, next, operation).catch((error: unknown) => fail(res, services, error));
  };
}

/**
 * The `result` event's data: where the job and its result are. The result itself (20 MB of base64
 * for an upscale) comes only with `?include=result`, as `result`.
 */
function resultEventLinks(id: string): JobEventData["result"] {
  return { status: "succeeded", jobUrl: jobLocation(id), resultUrl: `${jobLocation(id)}/result` };
}

/** The job a `/v1/jobs/{id}...` route names. */
function jobIdOf(req: Request): string {
  return parseOrThrow(jobPathSchema, req.params).id;
}

function lastEventIdOf(req: Request): number {
  const raw = req.get("last-event-id") ?? (typeof req.query.lastEventId === "string" ? req.query.lastEventId : undefined);
  const id = raw === undefined ? 0 : Number(raw);
  return Number.isSafeInteger(id) && id >= 0 ? id : 0;
}

/** Seconds between SSE comment lines, so proxies keep an idle stream open. */
const SSE_HEARTBEAT_MS = 15_000;

export function jobRoutes(services: AtelierServices, jobs: JobService, contextFor: ContextFor): express.Router {
  const routes = express.Router();
  const handle =
    (work: (req: Request, res: Response, ctx: RequestContext) => Promise<void>): RequestHandler =>
    (req, res) => {
      const ctx = contextFor(services, req, res);
      work(req, res, ctx).catch((error: unknown) => fail(res, services, error));
    };
  const ownJob = async (req: Request, ctx: RequestContext) => jobs.get((await identify(ctx)).id, jobIdOf(req));
  const { maxEventStreamsPerKey, maxResultDownloadsPerKey } = services.config.jobs;
  const openStreams = new OpenStreams({ events: maxEventStreamsPerKey, download: maxResultDownloadsPerKey });
  /** The key's job, once one of the key's places of `kind` is taken until the answer closes (429 when none is left). */
  const ownJobHolding = async (kind: StreamKind, req: Request, res: Response, ctx: RequestContext) => {
    const apiKey = await identify(ctx);
    const giveBack = openStreams.take(kind, apiKey.id);
    if (res.closed) giveBack();
    else res.once("close", giveBack);
    return jobs.get(apiKey.id, jobIdOf(req));
  };

  routes.get(
    JOBS_PATH,
    handle(async (req, res, ctx) => {
      const apiKey = await identify(ctx);
      const query = parseOrThrow(jobListQuerySchema, req.query);
      const page = await jobs.list(apiKey.id, query);
      const data = await Promise.all(page.jobs.map(async (job) => ({ ...(await jobs.view(job)), result: undefined })));
      res.json({ object: "list", data, hasMore: page.nextCursor !== null, nextCursor: page.nextCursor } satisfies JobList);
    }),
  );
  routes.get(
    `${JOBS_PATH}/:id`,
    handle(async (req, res, ctx) => {
      await sendView(res, jobs, await ownJob(req, ctx), 200);
    }),
  );
  routes.delete(
    `${JOBS_PATH}/:id`,
    handle(async (req, res, ctx) => {
      const apiKey = await identify(ctx);
      res.json(publicJob(await jobs.cancel(apiKey.id, jobIdOf(req))));
    }),
  );
  routes.get(
    `${JOBS_PATH}/:id/result`,
    handle(async (req, res, ctx) => {
      const job = await ownJobHolding("download", req, res, ctx);
      if (!isFinished(job.status)) {
        throw new AtelierError("JOB_CONFLICT", `Job ${job.id} is ${job.status}; its result is not ready. Follow ${jobLocation(job.id)}/events or retry later.`, {
          retryAfterSeconds: 1,
        });
      }
      if (job.status !== "succeeded") {
        throw new AtelierError("JOB_CONFLICT", `Job ${job.id} ${job.status} and has no result; its error is in ${jobLocation(job.id)}.`);
      }
      await sendResult(res, jobs, job, JOB_OPERATIONS.get(job.operation)?.returnsImages === true);
    }),
  );
  routes.get(
    `${JOBS_PATH}/:id/events`,
    handle(async (req, res, ctx) => {
      const job = await ownJobHolding("events", req, res, ctx);
      const { include } = parseOrThrow(jobEventsQuerySchema, req.query);
      res.status(200);
      res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
      // The stream may carry the result: never stored (facade/no-store.ts), nor transformed by a proxy.
      res.setHeader("Cache-Control", `${NO_STORE}, no-transform`);
      res.setHeader("X-Accel-Buffering", "no");
      res.flushHeaders();
      res.write("retry: 2000\n\n");
      const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), SSE_HEARTBEAT_MS);
      const write = async (event: JobEvent) => {
        if (event.type !== "result") {
          res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`);
          return;
        }
        const links = resultEventLinks(job.id);
        if (include !== "result") {
          res.write(`id: ${event.id}\nevent: result\ndata: ${JSON.stringify(links)}\n\n`);
          return;
        }
        // The result as the job answers it, its images read from the store a chunk at a time as the client takes them.
        const current = await jobs.store.get(job.id);
        const images = current && (await jobs.resultImages(current));
        // Purged meanwhile (the images gone), as once purged: null.
        const data = { ...links, result: images ? (current?.result ?? null) : null };
        res.write(`id: ${event.id}\nevent: result\ndata: `);
        if (await writePieces(res, (await jsonPieces(data, images ?? undefined)) ?? [JSON.stringify(data)])) res.write("\n\n");
      };
      let chain = Promise.resolve();
      try {
        await jobs.follow(job, lastEventIdOf(req), (event) => (chain = chain.then(() => write(event))), ctx.signal);
        await chain;
      } finally {
        clearInterval(heartbeat);
        res.end();
      }
    }),
  );
  routes.get(
    WEBHOOK_SECRET_PATH,
    handle(async (_req, res, ctx) => {
      const apiKey = await identify(ctx);
      res.json({ object: "webhook_secret", secret: await jobs.signingSecret(apiKey.id) } satisfies WebhookSecret);
    }),
  );
  routes.post(
    WEBHOOK_SECRET_PATH,
    handle(async (_req, res, ctx) => {
      const apiKey = await identify(ctx);
      res.json({ object: "webhook_secret", secret: await jobs.rotateSigningSecret(apiKey.id) } satisfies WebhookSecret);
    }),
  );
  return routes;
}
