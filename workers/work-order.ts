/**
 * The order in which the runs of concurrent calls get a model session. A call made of many runs (an
 * upscale's tiles, a self-ensemble's orientations) asks for them one after another; if each took its
 * place at the session's gate (onnx/run-gate.ts) when it asked, two calls would alternate tile by tile
 * and both finish late, the first one last as late as the second. So a run takes its place by its
 * call's rank: calls a person or program made before background work (core/work-priority.ts), then by
 * when the call reached the worker's queue (work-queue.ts), so the call that came first finishes first
 * and a later one still fills the session whenever the first has no run waiting.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { currentWorkPriority } from "../core/work-priority.js";

/** Where a run stands at a session's gate; see {@link runsBefore}. */
export interface WorkRank {
  background: boolean;
  /** When its call arrived, as a count of arrivals in this process. */
  arrival: number;
}

let arrivals = 0;
const callArrival = new AsyncLocalStorage<number>();

/** The arrival number of a call reaching the queue now. */
export function nextArrival(): number {
  return ++arrivals;
}

/** Runs `work` with every run it asks for, now or after an await, ranked as the call that arrived `arrival`-th. */
export function inArrivalOrder<T>(arrival: number, work: () => T): T {
  return callArrival.run(arrival, work);
}

/** The rank of a run asked for here: its call's, or, outside a queued call, that of a call arriving now. */
export function currentWorkRank(): WorkRank {
  return { background: currentWorkPriority() === "background", arrival: callArrival.getStore() ?? nextArrival() };
}

/** Whether a run of rank `a` goes before one of rank `b`. */
export function runsBefore(a: WorkRank, b: WorkRank): boolean {
  if (a.background !== b.background) return b.background;
  return a.arrival < b.arrival;
}
