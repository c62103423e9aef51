/**
 * Runs queued jobs: at most `concurrency` at once, keys taking turns (the key served longest ago
 * goes next, so one key's 500 jobs never starve another key's one), each job calling the router's
 * own procedure in a job context (job-context.ts). Every state change is stored first, then
 * published to live listeners.
 */
import { TRPCError } from "@trpc/server";
import { AtelierError, ERROR_KINDS, toPublicError } from "../core/errors.js";
import type { AtelierServices } from "../server/context.js";
import type { ApiKeyRecord } from "../server/keys/api-key-store.js";
import { appRouter } from "../server/router.js";
import { createCallerFactory } from "../server/trpc.js";
import { atelierErrorOf, toTRPCError } from "../server/trpc-errors.js";
import type { ProgressClients, WorkerProgress } from "../server/workers/progress-clients.js";
import { jobContext } from "./job-context.js";
import type { JobEventHub } from "./job-events.js";
import { JOB_OPERATIONS } from "./job-operations.js";
import { publicJob, type JobProgress, type JobRecord } from "./job-record.js";
import type { JobEvent, JobOutcome, JobStore } from "./job-store.js";

/** A job is started at most this many times; a second runner death fails it. */
export const MAX_JOB_ATTEMPTS = 2;

const createCaller = createCallerFactory(appRouter);

/** The abort reason when this router shuts down: the job stays `running` in the store and is recovered. */
const SHUTDOWN = new AtelierError("CANCELLED", "The router is shutting down.");

export interface JobRunnerOptions {
  concurrency: number;
  resultRetentionMs: number;
  recordRetentionMs: number;
  /** Called once a job has finished, after its outcome is stored (webhooks). */
  onFinished?: (job: JobRecord) => void;
  now?: () => number;
}

export class JobRunner {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  /** The turn each key was last served at; keys never served go first. */
  private readonly lastTurn = new Map<string, number>();
  private turn = 0;
  private pumping = false;
  private pumpAgain = false;
  private stopped = false;
  private purgeTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    private readonly store: JobStore,
    private readonly services: AtelierServices,
    private readonly progress: ProgressClients,
    private readonly hub: JobEventHub,
    private readonly options: JobRunnerOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Recovers jobs a previous runner left running, then starts taking jobs. */
  async start(): Promise<void> {
    const lost = new AtelierError(
      "INTERNAL",
      `The job was interrupted ${MAX_JOB_ATTEMPTS} times (the router running it stopped); it will not be retried. Submit it again.`,
    );
    const { requeued, failed } = await this.store.recover(MAX_JOB_ATTEMPTS, { status: lost.httpStatus, body: toPublicError(lost, "recovery") }, this.now());
    for (const id of requeued) await this.emit(id, "status", { status: "queued" });
    for (const id of failed) await this.emit(id, "status", { status: "failed" });
    if (requeued.length + failed.length > 0) {
      this.services.logger.warn({ requeued: requeued.length, failed: failed.length }, "recovered interrupted jobs");
    }
    this.purgeTimer = setInterval(() => void this.purge(), 60_000);
    this.purgeTimer.unref();
    await this.purge();
    this.wake();
  }

  /** Looks for work; call after a job is queued. */
  wake(): void {
    void this.pump().catch((error: unknown) => this.services.logger.error({ err: error }, "job queue failed"));
  }

  /** Stops the job if it is running here. */
  abort(id: string, reason: AtelierError): void {
    this.running.get(id)?.controller.abort(reason);
  }

  /** Stops taking jobs and abandons running ones, which stay `running` and are recovered on the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.purgeTimer);
    const done = [...this.running.values()].map((entry) => {
      entry.controller.abort(SHUTDOWN);
      return entry.done;
    });
    await Promise.allSettled(done);
  }

  /** Stores the outcome unless the job already finished, then announces it. False when it had. */
  async record(job: JobRecord, outcome: JobOutcome): Promise<boolean> {
    const now = this.now();
    if (!(await this.store.finish(job.id, outcome, now, now + this.options.resultRetentionMs))) return false;
    await this.emit(job.id, "status", { status: outcome.status });
    if (outcome.status === "succeeded") await this.emit(job.id, "result", null);
    else await this.emit(job.id, "error", outcome.error.body);
    const finished = await this.store.get(job.id);
    if (finished) this.options.onFinished?.(finished);
    return true;
  }

  async emit(jobId: string, type: JobEvent["type"], data: unknown): Promise<void> {
    this.hub.publish(await this.store.appendEvent(jobId, type, data));
  }

  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopped && this.running.size < this.options.concurrency) {
          if (!(await this.startNext())) break;
        }
      } while (this.pumpAgain && !this.stopped);
    } finally {
      this.pumping = false;
    }
  }

  /** Claims the head of the key served longest ago; false when nothing is queued. */
  private async startNext(): Promise<boolean> {
    const heads = await this.store.queueHeads();
    const order = heads
      .map((head, index) => ({ head, index, turn: this.lastTurn.get(head.apiKeyId) ?? -1 }))
      .sort((a, b) => a.turn - b.turn || a.index - b.index);
    for (const { head } of order) {
      const job = await this.store.claim(head.jobId, this.now());
      if (!job) continue;
      this.lastTurn.set(head.apiKeyId, ++this.turn);
      const controller = new AbortController();
      const entry = { controller, done: Promise.resolve() };
      this.running.set(job.id, entry);
      entry.done = this.execute(job, controller.signal)
        .catch((error: unknown) => this.services.logger.error({ err: error, jobId: job.id }, "job bookkeeping failed"))
        .finally(() => {
          this.running.delete(job.id);
          this.wake();
        });
      return true;
    }
    return false;
  }

  private async execute(job: JobRecord, signal: AbortSignal): Promise<void> {
    await this.emit(job.id, "status", { status: "running" });
    const operation = JOB_OPERATIONS.get(job.operation);
    const apiKey = await this.services.keys.get(job.apiKeyId);
    let outcome: JobOutcome;
    try {
      if (!operation) throw new AtelierError("INTERNAL", `This server cannot run ${job.operation} jobs.`);
      if (!apiKey || apiKey.revokedAt) throw new AtelierError("UNAUTHORIZED", "The API key that submitted this job has been revoked.");
      const ctx = jobContext(this.services, this.progress, { requestId: job.requestId, apiKey }, signal, (progress) => void this.reportProgress(job.id, progress));
      let procedure: unknown = createCaller(ctx);
      for (const segment of operation.procedurePath.split(".")) procedure = (procedure as Record<string, unknown>)[segment];
      const result = await (procedure as (input: unknown) => Promise<unknown>)(job.input);
      outcome = { status: "succeeded", result };
    } catch (error) {
      if (signal.reason === SHUTDOWN) return;
      const failure = atelierErrorOf(error instanceof TRPCError ? error : toTRPCError(error));
      const canceled = signal.aborted && failure.code === "CANCELLED";
      outcome = { status: canceled ? "canceled" : "failed", error: { status: failure.httpStatus, body: toPublicError(failure, job.requestId) } };
      if (!canceled && ERROR_KINDS[failure.code].http >= 500 && apiKey) await this.refund(apiKey);
    }
    await this.record(job, outcome);
  }

  private async refund(apiKey: ApiKeyRecord): Promise<void> {
    try {
      await this.services.quota.refund(apiKey.id, apiKey.hourlyLimit ?? this.services.config.quota.defaultLimit);
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
