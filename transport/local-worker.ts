/**
 * The worker services of the router's own process, called without gRPC. The default one-machine
 * deployment runs router and worker in one process, where a loopback RPC only serializes, frames,
 * copies and joins the images again on the one event loop both share. The worker side is
 * workers/local-calls.ts, the router side server/workers/local-worker-clients.ts.
 */

import type { WorkerServiceName } from "../core/config.js";

export interface LocalCallOptions {
  /** Aborts the work (it stops at its next check) when the caller goes away or its deadline passes. */
  signal: AbortSignal;
  /** The caller's W3C trace context, logged with the call as an RPC's metadata would be. */
  traceparent?: string;
  /** Progress of the work as it goes (`stage` empty where the work names none). */
  onProgress?: (step: number, steps: number, stage: string) => void;
}

export interface LocalWorker {
  /**
   * Runs the work of the RPC at `path` (`/package.Service/Method`), as that RPC would: the same
   * validation, metrics and log lines, and a failure as the AtelierError a gRPC caller rebuilds.
   */
  call<Res>(path: string, request: object, options: LocalCallOptions): Promise<Res>;
}

/** The worker in the router's process and the services it runs (those with no configured address). */
export interface InProcessWorker {
  worker: LocalWorker;
  services: ReadonlySet<WorkerServiceName>;
}
