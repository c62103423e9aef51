/**
 * Adapts an async function to a grpc-js unary handler: the call's cancellation and deadline become
 * an AbortSignal the work can check, and every failure becomes a status through toGrpcStatus.
 */
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream } from "@grpc/grpc-js";
import { AtelierError, asAtelierError } from "../core/errors.js";
import { toGrpcStatus } from "../core/grpc-errors.js";
import type { Logger } from "../core/logger.js";

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

export function unaryHandler<Req, Res>(
  logger: Logger,
  method: string,
  work: (request: Req, signal: AbortSignal) => Promise<Res>,
) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    const signal = abortSignalFor(call as AnyCall);
    const started = performance.now();
    work(call.request, signal).then(
      (response) => {
        logger.debug({ method, ms: Math.round(performance.now() - started) }, "call done");
        callback(null, response);
      },
      (error: unknown) => {
        const failure = asAtelierError(error);
        if (failure.code === "INTERNAL") logger.error({ method, err: error }, "call failed");
        else logger.info({ method, code: failure.code }, "call refused");
        callback(toGrpcStatus(failure));
      },
    );
  };
}
