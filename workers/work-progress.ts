/**
 * Progress of the work a call started, reported from deep inside a pipeline (tiling, for one)
 * without threading a callback through every layer: a streaming handler runs the work inside
 * {@link withProgress}, and code anywhere below calls {@link reportProgress}, which is a no-op
 * outside such a scope (unary calls, tests). The scope follows the work across awaits
 * (AsyncLocalStorage), including through the worker's queue (work-queue.ts binds each job).
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** `step` of `steps` of the named stage done. */
export type ProgressListener = (step: number, steps: number, stage: string) => void;

const scope = new AsyncLocalStorage<ProgressListener>();

export function withProgress<T>(listener: ProgressListener, work: () => Promise<T>): Promise<T> {
  return scope.run(listener, work);
}

export function reportProgress(step: number, steps: number, stage: string): void {
  scope.getStore()?.(step, steps, stage);
}
