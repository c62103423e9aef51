/**
 * How urgent the inference a call starts is. Work the service does for itself ahead of need (the
 * console's style thumbnails) runs as "background": a worker's queue starts it only when no call a
 * person or program made is waiting (workers/work-queue.ts). The priority follows the work across
 * awaits (AsyncLocalStorage), so a caller marks its calls without threading an argument through
 * every client; it reaches a worker in the caller's own process, where the console's previews run.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type WorkPriority = "normal" | "background";

const scope = new AsyncLocalStorage<WorkPriority>();

/** Runs `work` with every inference it starts queued as background work. */
export function inBackground<T>(work: () => Promise<T>): Promise<T> {
  return scope.run("background", work);
}

/** The priority of the work being started here: "normal" outside {@link inBackground}. */
export function currentWorkPriority(): WorkPriority {
  return scope.getStore() ?? "normal";
}
