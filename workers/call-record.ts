/**
 * One worker call's metrics (atelier_worker_calls_total, atelier_worker_call_duration_seconds) and
 * log lines, the same whichever way the call came: a unary RPC, a chunked one, or a call from the
 * router in this process (local-calls.ts).
 */
import { asAtelierError, type AtelierError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { workerCallDuration, workerCalls } from "../observability/metrics.js";

export interface CallRecord {
  succeeded(): void;
  /** Counts and logs the failure; returns it as the AtelierError the caller is answered with. */
  failed(error: unknown): AtelierError;
}

/** The name a call is counted and logged under: its RPC's method (`Upscale` of `/atelier.upscale.v1.UpscaleService/Upscale`). */
export function methodOf(rpcPath: string): string {
  return rpcPath.slice(rpcPath.lastIndexOf("/") + 1);
}

export function startCallRecord(logger: Logger, method: string, traceparent: string | undefined): CallRecord {
  const started = performance.now();
  const stopTimer = workerCallDuration.startTimer({ method });
  return {
    succeeded() {
      stopTimer();
      workerCalls.inc({ method, code: "OK" });
      logger.debug({ method, traceparent, ms: Math.round(performance.now() - started) }, "call done");
    },
    failed(error) {
      stopTimer();
      const failure = asAtelierError(error);
      workerCalls.inc({ method, code: failure.code });
      if (failure.code === "INTERNAL") logger.error({ method, traceparent, err: error }, "call failed");
      else logger.info({ method, traceparent, code: failure.code }, "call refused");
      return failure;
    },
  };
}
