/**
 * Scheduling on the queue that routers share through Redis. BullMQ (open source) has no per-group
 * fairness, so its queue holds *turns*, not jobs: each submission adds one turn, every router runs
 * a BullMQ Worker taking up to `concurrency` turns at once, and a turn runs the job that
 * {@link RedisJobStore.claimTurn} picks, the head of the key served longest ago across all
 * routers. One key's 500 queued jobs therefore wait behind another key's one just as on the
 * embedded queue, and BullMQ still brings what it is good at: blocking fetches instead of polling,
 * locks renewed while a router lives, and stalled-turn recovery when one dies. A turn remembers
 * the job it claimed, so the router that picks a stalled turn up retries that job, and fails it
 * clearly once it was interrupted {@link MAX_JOB_ATTEMPTS} times.
 */
import { Queue, WaitingError, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import { interruptedOutcome, MAX_JOB_ATTEMPTS, type JobRunner, type JobScheduler } from "./job-runner.js";
import type { RedisJobStore } from "./redis-job-store.js";
import { settlesWithin } from "./settles-within.js";

/** BullMQ queue name (keys `bull:atelier-job-turns:*`). */
export const TURN_QUEUE = "atelier-job-turns";

/**
 * Stalls BullMQ tolerates per turn before failing it itself. The store's attempt count decides a
 * job's fate, so this only has to be larger than {@link MAX_JOB_ATTEMPTS} plus deaths between
 * taking a turn and claiming its job.
 */
const MAX_TURN_STALLS = 10;

export interface BullmqJobSchedulerOptions {
  /** Turns this router runs at once. */
  concurrency: number;
  /** BullMQ lock duration: a dead router's turns are taken over within about twice this. */
  leaseMs: number;
  /** How long stopping waits for BullMQ before dropping its connection (Redis may be down). */
  closeWaitMs: number;
}

export class BullmqJobScheduler implements JobScheduler {
  private worker: Worker | undefined;

  constructor(
    private readonly store: RedisJobStore,
    private readonly queue: Queue,
    /** The worker's own connection (BullMQ blocks on it while waiting for turns). */
    private readonly workerConnection: Redis,
    private readonly options: BullmqJobSchedulerOptions,
  ) {}

  async start(runner: JobRunner): Promise<void> {
    const worker = new Worker(TURN_QUEUE, (turn: Job, token?: string) => this.take(runner, turn, token!), {
      connection: this.workerConnection,
      concurrency: this.options.concurrency,
      lockDuration: this.options.leaseMs,
      stalledInterval: this.options.leaseMs,
      maxStalledCount: MAX_TURN_STALLS,
      autorun: false,
    });
    worker.on("error", (error) => runner.logger.warn({ err: error }, "job queue worker error"));
    this.worker = worker;
    void worker.run().catch((error: unknown) => runner.logger.error({ err: error }, "job queue worker stopped"));
    await worker.waitUntilReady();
  }

  async queued(): Promise<void> {
    await this.queue.add("turn", {}, { removeOnComplete: true, removeOnFail: true });
  }

  async stop(): Promise<void> {
    if (this.worker && !(await settlesWithin(this.worker.close(), this.options.closeWaitMs))) {
      // Redis is unreachable: turns this router held go to another router once their lock lapses.
      this.workerConnection.disconnect();
    }
  }

  private async take(runner: JobRunner, turn: Job, token: string): Promise<void> {
    const claim = await this.store.claimTurn(turn.id!, runner.now(), MAX_JOB_ATTEMPTS);
    if ("idle" in claim) return;
    if ("lost" in claim) {
      await runner.record(claim.lost, interruptedOutcome(claim.lost.requestId));
      runner.logger.warn({ jobId: claim.lost.id }, "job failed: its router stopped too often");
    } else {
      if (claim.run.attempts > 1) runner.logger.warn({ jobId: claim.run.id, attempt: claim.run.attempts }, "retrying a job whose router stopped");
      if ((await runner.run(claim.run)) === "abandoned") {
        // This router is stopping: another takes the turn (and its job) over at once.
        await turn.moveToWait(token);
        throw new WaitingError();
      }
    }
    await this.store.endTurn(turn.id!);
  }
}
