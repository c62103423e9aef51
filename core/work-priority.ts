/**
 * How urgent the inference a call starts is. Work the service does for itself ahead of need (the
 * console's style thumbnails) runs as "background": a worker's queue starts it only when no call a
 * person or program made is waiting (workers/work-queue.ts). The priority follows the work across
 * awaits (AsyncLocalStorage), so a caller marks its calls without threading an argument through
 * every client. A worker in the caller's own process sees it directly; the router's gRPC clients
 * send it to workers elsewhere in the call's metadata (transport/work-priority-metadata.ts), and
 * those run the call's work inside it.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type WorkPriority = "normal" | "background";

const scope = new AsyncLocalStorage<WorkPriority>();

/** Runs `work` with every inference it starts, now or after an await, queued at `priority`. */
export function inWorkPriority<T>(priority: WorkPriority, work: () => T): T {
  return scope.run(priority, work);
}

/** Runs `work` with every inference it starts queued as background work. */
export function inBackground<T>(work: () => Promise<T>): Promise<T> {
  return inWorkPriority("background", work);
}

/** The priority of the work being started here: "normal" unless set by {@link inWorkPriority} or {@link inBackground}. */
export function currentWorkPriority(): WorkPriority {
  return scope.getStore() ?? "normal";
}
