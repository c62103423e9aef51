/**
 * Bounded concurrency for inference: at most `concurrency` jobs run, at most `queueLength` wait,
 * and beyond that callers are told to come back later (503 with Retry-After) rather than piling
 * up memory. Jobs whose caller has gone away are dropped before they start. Background work
 * (core/work-priority.ts) starts only when no other job waits: a call is never queued behind it.
 * Each job's model runs are ranked by when it arrived here (work-order.ts), so of the jobs running
 * at once the first to come gets a session first and finishes first.
 */
import { AsyncResource } from "node:async_hooks";
import PQueue from "p-queue";
import { AtelierError } from "../core/errors.js";
import { currentWorkPriority } from "../core/work-priority.js";
import { observeQueue, queueRejections, queueWait } from "../observability/metrics.js";
import { inArrivalOrder, nextArrival } from "./work-order.js";

export interface WorkQueueOptions {
  /** Jobs running at once, at least 1. */
  concurrency: number;
  /** Jobs allowed to wait; 0 refuses any job that cannot start at once. */
  queueLength: number;
  /** Seconds suggested to a refused caller. */
  retryAfterSeconds?: number;
}

/** p-queue starts higher priorities first; calls have its default, 0. */
const BACKGROUND_PRIORITY = -1;

export class WorkQueue {
  private readonly queue: PQueue;

  constructor(private readonly options: WorkQueueOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency });
    observeQueue(this);
  }

  /** Jobs waiting to start. */
  get waiting(): number {
    return this.queue.size;
  }

  /** Jobs running now. */
  get running(): number {
    return this.queue.pending;
  }

  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.queue.pending >= this.options.concurrency && this.queue.size >= this.options.queueLength) {
      queueRejections.inc();
      throw new AtelierError(
        "OVERLOADED",
        `The server is busy (${this.queue.pending} running, ${this.queue.size} waiting). Retry shortly.`,
        { retryAfterSeconds: this.options.retryAfterSeconds ?? 5 },
      );
    }
    const waited = queueWait.startTimer();
    const arrival = nextArrival();
    // Bound to the caller's async context: p-queue may start it from another job's continuation,
    // and the caller's progress scope (work-progress.ts) must follow it. Its model runs take their
    // place at a session by this arrival (work-order.ts).
    return this.queue.add(
      AsyncResource.bind(async () => {
        waited();
        signal?.throwIfAborted();
        return inArrivalOrder(arrival, job);
      }),
      { throwOnTimeout: true, priority: currentWorkPriority() === "background" ? BACKGROUND_PRIORITY : 0 },
    ) as Promise<T>;
  }

  async drain(): Promise<void> {
    await this.queue.onIdle();
  }
}
