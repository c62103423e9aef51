/**
 * Adapts an async function to a grpc-js unary handler: the call's cancellation and deadline become
 * an AbortSignal the work can check, and every failure becomes a status through toGrpcStatus.
 */
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream } from "@grpc/grpc-js";
import { AtelierError, asAtelierError } from "../core/errors.js";
import { toGrpcStatus } from "../core/grpc-errors.js";
import type { Logger } from "../core/logger.js";
import { workerCallDuration, workerCalls } from "../observability/metrics.js";

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;

/** Aborts when the client cancels or the call's deadline passes (grpc-js reports both as 'cancelled'). */
export function abortSignalFor(call: AnyCall): AbortSignal {
  const controller = new AbortController();
  const abort = () =>
    controller.abort(new AtelierError("CANCELLED", "The call was cancelled or its deadline passed."));
  if (call.cancelled) abort();
  else call.once("cancelled", abort);
  return controller.signal;
}

type Work = (request: never, signal: AbortSignal) => Promise<unknown>;

/** Each unary handler's work function, so the server can serve the same work over another framing (chunked-image-handler.ts). */
const works = new WeakMap<object, Work>();

/** The work function behind a handler made by {@link unaryHandler}; undefined for any other. */
export function workOf(handler: unknown): Work | undefined {
  return typeof handler === "function" ? works.get(handler) : undefined;
}

export function unaryHandler<Req, Res>(
  logger: Logger,
  method: string,
  work: (request: Req, signal: AbortSignal) => Promise<Res>,
) {
  const handler = (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    const signal = abortSignalFor(call as AnyCall);
    const started = performance.now();
    // The router forwards the request's W3C trace context, so worker logs join the same trace.
    const traceparent = call.metadata.get("traceparent")[0]?.toString();
    const stopTimer = workerCallDuration.startTimer({ method });
    work(call.request, signal).then(
      (response) => {
        stopTimer();
        workerCalls.inc({ method, code: "OK" });
        logger.debug({ method, traceparent, ms: Math.round(performance.now() - started) }, "call done");
        callback(null, response);
      },
      (error: unknown) => {
        stopTimer();
        const failure = asAtelierError(error);
        workerCalls.inc({ method, code: failure.code });
        if (failure.code === "INTERNAL") logger.error({ method, traceparent, err: error }, "call failed");
        else logger.info({ method, traceparent, code: failure.code }, "call refused");
        callback(toGrpcStatus(failure));
      },
    );
  };
  works.set(handler, work as Work);
  return handler;
}
