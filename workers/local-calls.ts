/**
 * The worker's services for the router in the same process (transport/local-worker.ts): each RPC's work
 * function (grpc-handler.ts `workOf`) called directly, with the same metrics and log lines as the
 * RPC (call-record.ts) and progress through the same scope the chunked RPCs report from. Once the
 * worker starts shutting down, new calls are refused as a worker going away is (503, Retry-After)
 * and shutdown waits for the running ones, as grpc-js's tryShutdown does for RPCs.
 */
import { AtelierError } from "../core/errors.js";
import { workerCallError } from "../transport/grpc-errors.js";
import type { Logger } from "../core/logger.js";
import type { LocalCallOptions, LocalWorker } from "../transport/local-worker.js";
import { methodOf, startCallRecord } from "./call-record.js";
import { callCancelled, worksByPath, type ServiceBinding, type Work } from "./grpc-handler.js";
import { withProgress } from "./work-progress.js";

export class LocalCalls implements LocalWorker {
  /** Each RPC path's work and the method name its metrics count it under. */
  private readonly works = new Map<string, { method: string; work: Work }>();
  private running = 0;
  private draining = false;
  /** Called once no call is running (drain's waiters). */
  private readonly whenIdle = new Set<() => void>();

  constructor(
    bindings: readonly ServiceBinding[],
    private readonly logger: Logger,
  ) {
    for (const [path, work] of worksByPath(bindings)) this.works.set(path, { method: methodOf(path), work });
  }

  async call<Res>(path: string, request: object, options: LocalCallOptions): Promise<Res> {
    const served = this.works.get(path);
    if (!served) throw new AtelierError("INTERNAL", `The worker in this process serves no ${path}.`);
    if (this.draining) throw workerCallError("WORKER_UNAVAILABLE");
    const record = startCallRecord(this.logger, served.method, options.traceparent);
    // The work sees CANCELLED as its reason, whatever the caller aborted with (as abortSignalFor gives RPCs).
    const controller = new AbortController();
    const cancel = () => controller.abort(callCancelled());
    if (options.signal.aborted) cancel();
    else options.signal.addEventListener("abort", cancel, { once: true });
    const work = () => served.work(request as never, controller.signal) as Promise<Res>;
    const { onProgress } = options;
    this.running++;
    try {
      const response = await (onProgress ? withProgress((step, steps, stage) => controller.signal.aborted || onProgress(step, steps, stage), work) : work());
      record.succeeded();
      return response;
    } catch (error) {
      throw record.failed(error);
    } finally {
      options.signal.removeEventListener("abort", cancel);
      if (--this.running === 0) for (const idle of this.whenIdle) idle();
    }
  }

  /** Refuses new calls from now on; resolves when the running ones have settled, or after `graceMs`. */
  drain(graceMs: number): Promise<void> {
    this.draining = true;
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.whenIdle.delete(done);
        resolve();
      };
      const timer = setTimeout(done, graceMs);
      timer.unref();
      this.whenIdle.add(done);
    });
  }
}
