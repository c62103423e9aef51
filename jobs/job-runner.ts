/**
 * Runs claimed jobs, each calling its operation's own handler in a job context (job-context.ts),
 * counted for usage and refunded on a server failure by the same access functions as a synchronous
 * call (server/access/access.ts); the quota was charged when the job was submitted.
 * Which job runs when is the scheduler's choice: local-job-scheduler.ts (keys take turns on this
 * router's embedded queue) or bullmq-job-scheduler.ts (routers sharing one Redis queue). Every
 * state change is stored first, then published to listeners; a job canceled anywhere is stopped
 * here when its `canceled` status event arrives.
 */
import { AtelierError, asAtelierError, ERROR_KINDS, toPublicError } from "../core/errors.js";
import { recordUsage, refund } from "../server/access/access.js";
import type { AtelierServices, RequestContext } from "../server/context.js";
import type { ApiKeyRecord } from "../server/keys/api-key-store.js";
import { runOperation } from "../server/procedures/handlers.js";
import type { WorkerProgress } from "../server/workers/worker-clients.js";
import { jobContext } from "./job-context.js";
import { jobRequest } from "./job-image-reads.js";
import { keepResultImages, newStandIn } from "./job-images.js";
import type { JobEventHub } from "./job-events.js";
import { JOB_OPERATIONS, type JobOperation } from "./job-operations.js";
import { publicJob, publicJobError, type JobProgress, type JobRecord } from "./job-record.js";
import type { JobEventData, JobEventType } from "./job-schemas.js";
import type { JobOutcome, JobStore } from "./job-store.js";
import type { ImageBytes } from "./raw-image.js";

type StoredEventData = Omit<JobEventData, "result"> & { result: null };

/** Status of a call that returned normally: every operation answers 200. */
const OK_STATUS = 200;

/** A job is started at most this many times; a second runner death fails it. */
export const MAX_JOB_ATTEMPTS = 2;

/** The abort reason when this router shuts down: the job is left to be retried (see the schedulers). */
const SHUTDOWN = new AtelierError("CANCELLED", "The router is shutting down.");

/** The outcome of a job whose runner died {@link MAX_JOB_ATTEMPTS} times. */
export function interruptedOutcome(requestId: string): JobOutcome & { status: "failed" } {
  const lost = new AtelierError(
    "INTERNAL",
    `The job was interrupted ${MAX_JOB_ATTEMPTS} times (the router running it stopped); it will not be retried. Submit it again.`,
  );
  return { status: "failed", error: { status: lost.httpStatus, body: toPublicError(lost, requestId) } };
}

/** Decides which queued job runs next and hands it to {@link JobRunner.run}. */
export interface JobScheduler {
  start(runner: JobRunner): Promise<void>;
  /** A job was stored as queued. */
  queued(jobId: string): Promise<void>;
  /** Stops taking jobs (resolves once the jobs it handed out have returned). */
  stop(): Promise<void>;
}

export interface JobRunnerOptions {
  resultRetentionMs: number;
  recordRetentionMs: number;
  /** Called once a job has finished, after its outcome is stored (webhooks). */
  onFinished?: (job: JobRecord) => void;
  now?: () => number;
}

export class JobRunner {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  private stopped = false;
  private purgeTimer: NodeJS.Timeout | undefined;
  readonly now: () => number;

  constructor(
    readonly store: JobStore,
    private readonly services: AtelierServices,
    private readonly hub: JobEventHub,
    private readonly scheduler: JobScheduler,
    private readonly options: JobRunnerOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get logger(): AtelierServices["logger"] {
    return this.services.logger;
  }

  /** Starts purging old jobs and the scheduler. */
  async start(): Promise<void> {
    this.purgeTimer = setInterval(() => void this.purge(), 60_000);
    this.purgeTimer.unref();
    await this.purge();
    await this.scheduler.start(this);
  }

  /** Announces a stored queued job and hands it to the scheduler. */
  async queued(jobId: string): Promise<void> {
    await this.emit(jobId, "status", { status: "queued" });
    await this.scheduler.queued(jobId);
  }

  /**
   * Stops taking jobs and abandons running ones: they stay `running` in the store for the
   * scheduler to retry (counting as an interruption).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.purgeTimer);
    const scheduling = this.scheduler.stop();
    const done = [...this.running.values()].map((entry) => {
      entry.controller.abort(SHUTDOWN);
      return entry.done;
    });
    await Promise.allSettled([...done, scheduling]);
  }

  /** Stores the outcome unless the job already finished, then announces it. False when it had. */
  async record(job: JobRecord, outcome: JobOutcome): Promise<boolean> {
    const now = this.now();
    if (!(await this.store.finish(job.id, outcome, now, now + this.options.resultRetentionMs))) return false;
    await this.emit(job.id, "status", { status: outcome.status });
    if (outcome.status === "succeeded") await this.emit(job.id, "result", null);
    else await this.emit(job.id, "error", publicJobError(outcome.error));
    const finished = await this.store.get(job.id);
    if (finished) this.options.onFinished?.(finished);
    return true;
  }

  /** Appends and publishes an event; a `result` event is stored without data (readers say where the result is). */
  async emit<Type extends JobEventType>(jobId: string, type: Type, data: StoredEventData[Type]): Promise<void> {
    this.hub.publish(await this.store.appendEvent(jobId, type, data));
  }

  /**
   * Runs a job the scheduler claimed until it has an outcome (`finished`), or until this router
   * stops (`abandoned`: the job is still `running` in the store).
   */
  async run(job: JobRecord): Promise<"finished" | "abandoned"> {
    if (this.stopped) return "abandoned";
    const controller = new AbortController();
    // A cancel recorded by any router reaches this one as the job's `canceled` status event.
    const unsubscribe = this.hub.subscribe(job.id, (event) => {
      if (event.type === "status" && (event.data as { status?: string }).status === "canceled") {
        controller.abort(new AtelierError("CANCELLED", "The job was canceled."));
      }
    });
    const done = this.execute(job, controller.signal).catch((error: unknown) => {
      this.services.logger.error({ err: error, jobId: job.id }, "job bookkeeping failed");
      return "finished" as const;
    });
    this.running.set(job.id, { controller, done });
    try {
      return await done;
    } finally {
      unsubscribe();
      this.running.delete(job.id);
    }
  }

  private async execute(job: JobRecord, signal: AbortSignal): Promise<"finished" | "abandoned"> {
    await this.emit(job.id, "status", { status: "running" });
    const operation = JOB_OPERATIONS.get(job.operation);
    const apiKey = await this.services.keys.get(job.apiKeyId);
    let outcome: JobOutcome;
    try {
      if (!operation) throw new AtelierError("INTERNAL", `This server cannot run ${job.operation} jobs.`);
      if (!apiKey || apiKey.revokedAt) throw new AtelierError("UNAUTHORIZED", "The API key that submitted this job has been revoked.");
      const request = await jobRequest(this.store, job);
      const kept = new Map<string, ImageBytes>();
      const keepImage = (image: ImageBytes) => {
        const standIn = newStandIn();
        kept.set(standIn, image);
        return standIn;
      };
      const ctx = jobContext(this.services, { requestId: job.requestId }, signal, (progress) => void this.reportProgress(job.id, progress), {
        keepImage,
        bodyStringBytes: request.bytesOf,
      });
      const result = await this.runCounted(operation, apiKey, request.input, ctx);
      outcome = { status: "succeeded", result, images: keepResultImages(result, kept) };
    } catch (error) {
      if (signal.reason === SHUTDOWN) return "abandoned";
      const failure = asAtelierError(error);
      const canceled = signal.aborted && failure.code === "CANCELLED";
      outcome = { status: canceled ? "canceled" : "failed", error: { status: failure.httpStatus, body: toPublicError(failure, job.requestId) } };
      if (!canceled && apiKey) await this.refund(apiKey, failure, job.requestId);
    }
    await this.record(job, outcome);
    return "finished";
  }

  /** Runs the operation's handler as the synchronous call would, counted for usage under its operation as that call is. */
  private async runCounted(operation: JobOperation, apiKey: ApiKeyRecord, input: unknown, ctx: RequestContext): Promise<unknown> {
    const started = performance.now();
    let status = OK_STATUS;
    try {
      return await runOperation(operation.id, input, ctx);
    } catch (error) {
      const failure = asAtelierError(error);
      status = ERROR_KINDS[failure.code].http;
      if (failure.code === "INTERNAL") this.services.logger.error({ requestId: ctx.requestId, path: operation.id, err: failure.cause ?? failure }, "request failed");
      throw failure;
    } finally {
      recordUsage(this.services, { apiKey, operation: operation.id, status, durationMs: performance.now() - started });
    }
  }

  /** Gives the job's charge back when the server failed it (server/access/access.ts decides). */
  private async refund(apiKey: ApiKeyRecord, failure: AtelierError, requestId: string): Promise<void> {
    try {
      await refund(this.services, apiKey, failure, () => undefined, requestId);
    } catch (error) {
      this.services.logger.warn({ err: error, keyId: apiKey.id }, "could not refund a failed job");
    }
  }

  private async reportProgress(jobId: string, { step, steps, stage }: WorkerProgress): Promise<void> {
    const progress: JobProgress = { fraction: steps > 0 ? Math.min(1, step / steps) : 0, step, steps, stage };
    await this.store.setProgress(jobId, progress);
    await this.emit(jobId, "progress", progress);
  }

  private async purge(): Promise<void> {
    const now = this.now();
    try {
      await this.store.purge(now, now - this.options.recordRetentionMs, now - 24 * 3_600_000);
    } catch (error) {
      this.services.logger.warn({ err: error }, "job purge failed");
    }
  }
}

export { publicJob };
