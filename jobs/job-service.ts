/**
 * What the jobs API does, independent of HTTP: submit, look up, list, cancel, wait for and follow
 * a key's jobs. Every lookup is scoped to the calling key: another key's job does not exist (404).
 */
import { randomBytes } from "node:crypto";
import { AtelierError, toPublicError } from "../core/errors.js";
import type { AtelierServices, RequestContext } from "../server/context.js";
import type { AddressPolicy } from "../server/image-source/address-policy.js";
import { identify, charge } from "./job-access.js";
import type { JobEventHub } from "./job-events.js";
import { keepRequestImages } from "./job-images.js";
import type { JobOperation } from "./job-operations.js";
import { parseOrThrow, waitPolicy, webhookTarget } from "./job-submission.js";
import { IDEMPOTENCY_WINDOW_MS, requestFingerprint } from "./idempotency.js";
import type { Preferences } from "./prefer-header.js";
import { imageStreamsOf } from "./job-image-reads.js";
import type { ImagesToStore } from "./job-images.js";
import { isFinished, publicJob, type JobRecord, type JobStatus, type PublicJob } from "./job-record.js";
import type { JobRunner } from "./job-runner.js";
import type { JobEvent, JobListPage, JobStore } from "./job-store.js";
import type { ImagesByStandIn } from "./json-pieces.js";
import { newSigningSecret } from "./webhooks/webhook-signature.js";

export interface Submission {
  apiKeyId: string;
  /** REST path of the operation, e.g. `/v1/generate`. */
  operation: string;
  /** The validated request body, without `webhookUrl`, its long data URLs replaced by stand-ins of `images`. */
  input: unknown;
  /** The request's data URLs as their bytes (job-images.ts keepRequestImages). */
  images?: ImagesToStore;
  requestId: string;
  webhookUrl: string | null;
}

/** A POST operation's request that is to become a job, as the HTTP edge read it. */
export interface JobRequest {
  operation: JobOperation;
  /** The parsed body, `webhookUrl` included. */
  body: Record<string, unknown>;
  preferences: Preferences;
  idempotencyKey: string | undefined;
  ctx: RequestContext;
}

/** A request accepted as a job (or found again by its idempotency key), and how long to wait for it. */
export interface AcceptedJob {
  job: JobRecord;
  waitMs: number;
  /** The preferences as applied (`Preference-Applied`). */
  preferences: Preferences;
}

/** Seconds a client is told to wait before retrying a refused submission. */
const FULL_RETRY_AFTER_SECONDS = 5;

export function newJobId(): string {
  return `job_${randomBytes(12).toString("base64url")}`;
}

export class JobService {
  constructor(
    readonly store: JobStore,
    readonly runner: JobRunner,
    readonly hub: JobEventHub,
    private readonly services: AtelierServices,
    /** The image fetcher's address policy, which webhook targets obey too. */
    readonly addressPolicy: AddressPolicy,
  ) {}

  /**
   * Makes a POST operation's request a job: the caller's key (scoped to the operation), the
   * webhook target, the checks the operation can make before any work (so a job that cannot
   * succeed is never accepted nor charged), the idempotency key (a repeat with the same body is
   * answered with the first job, marked `Idempotent-Replayed`), then one charge to the quota and the
   * job stored with its images as bytes.
   */
  async accept({ operation, body, preferences, idempotencyKey, ctx }: JobRequest): Promise<AcceptedJob> {
    const apiKey = await identify(ctx, operation.id);
    const { webhookUrl: _webhookUrl, ...input } = body;
    const webhook = webhookTarget(body, this.addressPolicy);
    await operation.precheck?.(parseOrThrow(operation.input, input), ctx);
    const wait = waitPolicy(preferences, webhook !== null, idempotencyKey !== undefined, this.services.config);
    const accepted = (job: JobRecord): AcceptedJob => ({ job, waitMs: wait.waitMs, preferences: wait.preferences });

    const id = newJobId();
    const bytesOf = (text: string) => ctx.bodyStringBytes?.(text);
    if (idempotencyKey !== undefined) {
      const fingerprint = await requestFingerprint(operation.restPath, body, bytesOf);
      const now = Date.now();
      const bound = await this.store.bindIdempotencyKey({ apiKeyId: apiKey.id, key: idempotencyKey, fingerprint, jobId: id, createdAtMs: now });
      if (!bound) {
        const entry = await this.store.idempotencyEntry(apiKey.id, idempotencyKey, now - IDEMPOTENCY_WINDOW_MS);
        if (!entry) throw new AtelierError("JOB_CONFLICT", "A request with this Idempotency-Key is being submitted; retry in a moment.", { retryAfterSeconds: 1 });
        if (entry.fingerprint !== fingerprint) {
          throw new AtelierError(
            "IDEMPOTENCY_MISMATCH",
            `Idempotency-Key ${JSON.stringify(idempotencyKey)} was already used with a different request in the last 24 hours; use a new key for a new request.`,
          );
        }
        const original = await this.store.get(entry.jobId);
        if (!original) throw new AtelierError("JOB_CONFLICT", "A request with this Idempotency-Key is being submitted; retry in a moment.", { retryAfterSeconds: 1 });
        ctx.setHeader("Idempotent-Replayed", "true");
        if (!wait.answerAsync && !isFinished(original.status)) {
          throw new AtelierError("JOB_CONFLICT", `The request with Idempotency-Key ${JSON.stringify(idempotencyKey)} is still in progress (job ${original.id}); retry when it has finished.`, {
            retryAfterSeconds: 1,
          });
        }
        return accepted(original);
      }
    }
    try {
      await charge(ctx, apiKey);
      // The request's data URLs are stored as the bytes they came in, never read as strings.
      const kept = keepRequestImages(input, bytesOf);
      return accepted(await this.submit({ apiKeyId: apiKey.id, operation: operation.restPath, input: kept.input, images: kept.images, requestId: ctx.requestId, webhookUrl: webhook }, id));
    } catch (error) {
      if (idempotencyKey !== undefined) await this.store.releaseIdempotencyKey(apiKey.id, idempotencyKey, id);
      throw error;
    }
  }

  async submit(submission: Submission, id = newJobId()): Promise<JobRecord> {
    const { maxActivePerKey, maxQueued } = this.services.config.jobs;
    const outcome = await this.store.insert({ id, ...submission, createdAtMs: Date.now() }, { maxActivePerKey, maxQueued });
    if ("refused" in outcome) {
      if (outcome.refused === "key") {
        throw new AtelierError(
          "TOO_MANY_JOBS",
          `This key already has ${maxActivePerKey} queued or running jobs (ATELIER_JOB_MAX_ACTIVE_PER_KEY). Retry when some have finished.`,
          { retryAfterSeconds: FULL_RETRY_AFTER_SECONDS },
        );
      }
      throw new AtelierError("OVERLOADED", `The job queue is full (${maxQueued} jobs waiting). Retry later.`, {
        retryAfterSeconds: FULL_RETRY_AFTER_SECONDS,
      });
    }
    await this.runner.queued(id);
    return outcome.inserted;
  }

  /** The key's job, or 404 (also for another key's job: its existence is not revealed). */
  async get(apiKeyId: string, id: string): Promise<JobRecord> {
    const job = await this.store.get(id);
    if (!job || job.apiKeyId !== apiKeyId) throw new AtelierError("NOT_FOUND", `No job ${JSON.stringify(id)} for this API key.`);
    return job;
  }

  /**
   * Readers of the images of the job's result, by the stand-ins in it (ready for
   * facade/result-responses.ts, which writes them out a chunk at a time); null when they were
   * purged after `job` was read.
   */
  async resultImages(job: JobRecord): Promise<ImagesByStandIn | null> {
    if (job.result === null || job.images.size === 0) return new Map();
    return imageStreamsOf(this.store, job.id, new Map([...job.images].filter(([, image]) => image.blob.part === "result")));
  }

  /** {@link view} and readers of its result's images; a result purged meanwhile is left out, as once purged. */
  async viewWithImages(job: JobRecord): Promise<{ view: PublicJob; images: ImagesByStandIn }> {
    const images = await this.resultImages(job);
    return images === null ? { view: await this.view({ ...job, result: null }), images: new Map() } : { view: await this.view(job), images };
  }

  async view(job: JobRecord): Promise<PublicJob> {
    return publicJob(
      job,
      job.status === "queued" ? await this.store.queuePosition(job) : undefined,
      job.webhookUrl ? await this.store.deliveryOf(job.id) : undefined,
    );
  }

  list(apiKeyId: string, options: { status?: JobStatus; cursor?: string; limit: number }): Promise<JobListPage> {
    return this.store.list(apiKeyId, options);
  }

  /** The key's webhook signing secret, made on first use. */
  signingSecret(apiKeyId: string): Promise<string> {
    return this.store.signingSecret(apiKeyId, newSigningSecret);
  }

  /** Replaces the key's webhook signing secret; every later delivery (retries included) uses the new one. */
  async rotateSigningSecret(apiKeyId: string): Promise<string> {
    const secret = newSigningSecret();
    await this.store.rotateSigningSecret(apiKeyId, secret);
    return secret;
  }

  /**
   * Cancels a queued or running job; 409 once it has finished. The router running it stops it when
   * the `canceled` status event reaches it (job-runner.ts).
   */
  async cancel(apiKeyId: string, id: string): Promise<JobRecord> {
    const job = await this.get(apiKeyId, id);
    const reason = new AtelierError("CANCELLED", "The job was canceled.");
    const canceled = !isFinished(job.status) && (await this.runner.record(job, { status: "canceled", error: { status: reason.httpStatus, body: toPublicError(reason, job.requestId) } }));
    if (!canceled) {
      const current = await this.get(apiKeyId, id);
      throw new AtelierError("JOB_CONFLICT", `Job ${id} has already finished (${current.status}); there is nothing to cancel.`);
    }
    return this.get(apiKeyId, id);
  }

  /** Resolves with the job once finished, or as it is after `ms` (or when `signal` aborts). */
  async waitFor(job: JobRecord, ms: number, signal?: AbortSignal): Promise<JobRecord> {
    if (isFinished(job.status) || ms <= 0) return job;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const unsubscribe = this.hub.subscribe(job.id, (event) => {
        if (event.type === "result" || event.type === "error") done();
      });
      signal?.addEventListener("abort", done, { once: true });
      // It may have finished between the caller's read and the subscription.
      void this.store.get(job.id).then((current) => current && isFinished(current.status) && done());
    });
    return (await this.store.get(job.id)) ?? job;
  }

  /** Stored events after `afterId`, then live ones, until the job's final event. */
  follow(job: JobRecord, afterId: number, onEvent: (event: JobEvent) => void, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      let last = afterId;
      let replaying = true;
      const pending: JobEvent[] = [];
      const finish = () => {
        unsubscribe();
        stopOnShutdown();
        signal.removeEventListener("abort", finish);
        resolve();
      };
      const deliver = (event: JobEvent) => {
        if (event.id <= last) return;
        last = event.id;
        onEvent(event);
        if (event.type === "result" || event.type === "error") finish();
      };
      const unsubscribe = this.hub.subscribe(job.id, (event) => (replaying ? pending.push(event) : deliver(event)));
      const stopOnShutdown = this.hub.onShutdown(finish);
      signal.addEventListener("abort", finish, { once: true });
      void this.store.eventsAfter(job.id, afterId).then((stored) => {
        for (const event of stored) deliver(event);
        replaying = false;
        for (const event of pending) deliver(event);
      });
    });
  }
}
