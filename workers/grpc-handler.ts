/**
 * Adapts an async function to a grpc-js unary handler: the call's cancellation and deadline become
 * an AbortSignal the work can check, and every failure becomes a status through toGrpcStatus.
 */
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream, ServiceDefinition, UntypedServiceImplementation } from "@grpc/grpc-js";
import { AtelierError } from "../core/errors.js";
import { toGrpcStatus } from "../transport/grpc-errors.js";
import type { Logger } from "../core/logger.js";
import { startCallRecord } from "./call-record.js";

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;

/** Why a call's work stops when its caller goes away or its deadline passes. */
export function callCancelled(): AtelierError {
  return new AtelierError("CANCELLED", "The call was cancelled or its deadline passed.");
}

/** Aborts when the client cancels or the call's deadline passes (grpc-js reports both as 'cancelled'). */
export function abortSignalFor(call: AnyCall): AbortSignal {
  const controller = new AbortController();
  const abort = () => controller.abort(callCancelled());
  if (call.cancelled) abort();
  else call.once("cancelled", abort);
  return controller.signal;
}

export type Work = (request: never, signal: AbortSignal) => Promise<unknown>;

/** Each unary handler's work function, so the worker can serve the same work over another framing (chunked-image-handler.ts) or to the router in its process (local-calls.ts). */
const works = new WeakMap<object, Work>();

/** The work function behind a handler made by {@link unaryHandler}; undefined for any other. */
export function workOf(handler: unknown): Work | undefined {
  return typeof handler === "function" ? works.get(handler) : undefined;
}

/** A service as a worker binds it to its gRPC server. */
export interface ServiceBinding {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

/** The work of each RPC of `bindings` made by {@link unaryHandler}, by the RPC's path. */
export function worksByPath(bindings: readonly ServiceBinding[]): Map<string, Work> {
  const byPath = new Map<string, Work>();
  for (const { definition, implementation } of bindings) {
    for (const [name, method] of Object.entries(definition)) {
      const work = workOf(implementation[name]);
      if (work) byPath.set(method.path, work);
    }
  }
  return byPath;
}

export function unaryHandler<Req, Res>(
  logger: Logger,
  method: string,
  work: (request: Req, signal: AbortSignal) => Promise<Res>,
) {
  const handler = (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    const signal = abortSignalFor(call as AnyCall);
    // The router forwards the request's W3C trace context, so worker logs join the same trace.
    const record = startCallRecord(logger, method, call.metadata.get("traceparent")[0]?.toString());
    work(call.request, signal).then(
      (response) => {
        record.succeeded();
        callback(null, response);
      },
      (error: unknown) => callback(toGrpcStatus(record.failed(error))),
    );
  };
  works.set(handler, work as Work);
  return handler;
}
