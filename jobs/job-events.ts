/**
 * Live delivery of job events inside this process: the runner publishes each event after storing
 * it, and event streams (SSE) and `Prefer: wait` subscribe by job id. Stored events are the
 * record; this only wakes listeners up.
 */
import { EventEmitter } from "node:events";
import type { JobEvent } from "./job-store.js";

const SHUTDOWN_EVENT = Symbol("shutdown");

export class JobEventHub {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per open event stream or waiting request.
    this.emitter.setMaxListeners(0);
  }

  publish(event: JobEvent): void {
    this.emitter.emit(event.jobId, event);
  }

  /** Ends every subscription that asked to hear of it (open event streams), for shutdown. */
  shutdown(): void {
    this.emitter.emit(SHUTDOWN_EVENT);
  }

  onShutdown(listener: () => void): () => void {
    this.emitter.once(SHUTDOWN_EVENT, listener);
    return () => this.emitter.off(SHUTDOWN_EVENT, listener);
  }

  /** Calls `listener` for each new event of the job; returns the unsubscribe function. */
  subscribe(jobId: string, listener: (event: JobEvent) => void): () => void {
    this.emitter.on(jobId, listener);
    return () => this.emitter.off(jobId, listener);
  }
}
