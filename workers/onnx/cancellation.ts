/**
 * AbortSignal handling shared by the runtime and the image steps: a cancelled call surfaces as an
 * AtelierError CANCELLED whatever reason the signal carries (the gRPC handler already aborts with one).
 */
import { AtelierError } from "../../core/errors.js";

/** The error a cancelled piece of work rejects with: the signal's reason when it is an AtelierError. */
export function cancelledError(signal: AbortSignal): AtelierError {
  const reason: unknown = signal.reason;
  if (reason instanceof AtelierError) return reason;
  return new AtelierError("CANCELLED", "The work was cancelled before it finished.", { cause: reason });
}

/** Throws {@link cancelledError} when `signal` has been aborted. */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelledError(signal);
}

/**
 * Waits for `promise`, but rejects as soon as `signal` aborts. The promise itself keeps running (it
 * may be shared with other waiters); only this wait is abandoned.
 */
export function untilCancelled<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(cancelledError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
