/**
 * Adds up API calls in memory and writes them to the usage store in batches, so recording a call
 * costs one map update on the request path and the store sees one transaction every few seconds
 * whatever the request rate. What a crash loses is at most one flush interval of counts.
 */
import type { Logger } from "../../core/logger.js";
import { hourStart, type UsageIncrement, type UsageStore } from "./usage-store.js";

/** One finished API call. */
export interface UsageEvent {
  keyId: string;
  operation: string;
  /** HTTP status of the answer. */
  status: number;
  /** Wall time the service spent on it, in milliseconds. */
  durationMs: number;
  /** When it finished, milliseconds since the epoch. */
  atMs: number;
}

export interface UsageRecorderOptions {
  /** Milliseconds between flushes. */
  flushIntervalMs: number;
  /**
   * Buckets kept in memory at most while the store cannot be written (a database outage): past
   * this, the oldest hours are dropped with a warning rather than letting memory grow.
   */
  maxPendingBuckets?: number;
  logger?: Logger;
}

const DEFAULT_MAX_PENDING_BUCKETS = 100_000;

export class UsageRecorder {
  private pending = new Map<string, UsageIncrement>();
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly maxPending: number;

  constructor(
    private readonly store: UsageStore,
    private readonly options: UsageRecorderOptions,
  ) {
    this.maxPending = options.maxPendingBuckets ?? DEFAULT_MAX_PENDING_BUCKETS;
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    // Counting must never keep a process alive that is otherwise done.
    this.timer.unref();
  }

  /** Counts one call; synchronous and allocation-light, for the request path. */
  record(event: UsageEvent): void {
    const hour = hourStart(event.atMs);
    const id = `${hour}\u0000${event.keyId}\u0000${event.operation}\u0000${event.status}`;
    const bucket = this.pending.get(id);
    if (bucket) {
      bucket.requests += 1;
      bucket.computeMs += event.durationMs;
      return;
    }
    this.pending.set(id, { hourStartMs: hour, keyId: event.keyId, operation: event.operation, status: event.status, requests: 1, computeMs: event.durationMs });
    if (this.pending.size > this.maxPending) this.dropOldest();
  }

  /** Buckets waiting to be written. */
  get pendingBuckets(): number {
    return this.pending.size;
  }

  /**
   * Writes what has been counted so far. Concurrent callers share one write; a failed write keeps
   * its counts for the next attempt. Resolves once everything counted before the call is stored
   * (or the write failed, which is logged, not thrown: counting must never fail an API call).
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.store
      .add([...batch.values()])
      .catch((error: unknown) => {
        this.options.logger?.warn({ err: error, buckets: batch.size }, "usage counters could not be written; retrying at the next flush");
        this.putBack(batch);
      })
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private putBack(batch: Map<string, UsageIncrement>): void {
    for (const [id, bucket] of batch) {
      const newer = this.pending.get(id);
      if (newer) {
        newer.requests += bucket.requests;
        newer.computeMs += bucket.computeMs;
      } else {
        this.pending.set(id, bucket);
      }
    }
    if (this.pending.size > this.maxPending) this.dropOldest();
  }

  private dropOldest(): void {
    const excess = this.pending.size - this.maxPending;
    const oldest = [...this.pending.entries()].sort(([, a], [, b]) => a.hourStartMs - b.hourStartMs).slice(0, excess);
    for (const [id] of oldest) this.pending.delete(id);
    this.options.logger?.warn({ dropped: oldest.length }, "usage counters dropped: too many buckets waiting for the store");
  }
}
