/**
 * A gate letting at most `limit` runs through at once, the waiting ones in the order of their ranks
 * (work-order.ts: calls before background work, then by their call's arrival; equal ranks first come,
 * first served). One session's intra-op threads already use the cores it was given; two runs on it at
 * once would only make both slower and double the activation memory, so sessions are normally gated at 1.
 */
import { nextArrival, runsBefore, type WorkRank } from "../work-order.js";
import { cancelledError } from "./cancellation.js";

interface Waiter {
  rank: WorkRank;
  admit: () => void;
  reject: (error: unknown) => void;
}

export class RunGate {
  private active = 0;
  private readonly queue: Waiter[] = [];

  /** @param limit runs let through at once, at least 1. */
  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`Expected integer of at least 1 for limit but received ${limit}`);
  }

  /** Runs inside the gate now. */
  get running(): number {
    return this.active;
  }

  /** Runs waiting to enter. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Resolves once a place is free and no waiter of an earlier rank is left (default: a call arriving
   * now); the returned function gives the place back (calling it twice is harmless). A wait whose
   * signal aborts leaves the queue and rejects with CANCELLED, so it never runs and never holds up
   * those behind it.
   */
  enter(signal?: AbortSignal, rank: WorkRank = { background: false, arrival: nextArrival() }): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(cancelledError(signal));
    if (this.active < this.limit && this.queue.length === 0) {
      this.active++;
      return Promise.resolve(this.exitOnce());
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        reject(cancelledError(signal!));
      };
      const waiter: Waiter = {
        rank,
        admit: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.exitOnce());
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const later = this.queue.findIndex((other) => runsBefore(rank, other.rank));
      this.queue.splice(later < 0 ? this.queue.length : later, 0, waiter);
    });
  }

  /** Rejects every waiting run with `error` (used when the session goes away). */
  rejectWaiting(error: unknown): void {
    for (const waiter of this.queue.splice(0)) waiter.reject(error);
  }

  private exitOnce(): () => void {
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      const next = this.queue.shift();
      // The place passes straight to the first waiter, so a newcomer cannot overtake it.
      if (next) next.admit();
      else this.active--;
    };
  }
}
