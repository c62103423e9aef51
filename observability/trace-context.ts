/**
 * W3C Trace Context (`traceparent`) for one request: taken from the caller when it sent a valid one,
 * else started here, and kept in async-local storage so code far from the HTTP layer (the gRPC
 * worker clients) can forward it without every function passing it along.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";

export interface TraceContext {
  /** 32 lowercase hex digits, shared by every hop of the request. */
  traceId: string;
  /** 16 hex digits: this hop's span, the parent of the spans it calls. */
  spanId: string;
  /** The caller's span, when the trace came from outside. */
  parentSpanId: string | undefined;
  /** Trace flags (01 = sampled), passed through unchanged. */
  flags: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const storage = new AsyncLocalStorage<TraceContext>();

function newSpanId(): string {
  return randomBytes(8).toString("hex");
}

/**
 * The trace a request with `header` continues. Invalid values (all-zero ids, version ff, bad syntax)
 * start a new trace, as the specification says a receiver must.
 */
export function traceFromHeader(header: string | undefined): TraceContext {
  const match = header === undefined ? null : TRACEPARENT.exec(header.trim().toLowerCase());
  if (match && match[1] !== "ff" && !/^0+$/.test(match[2]!) && !/^0+$/.test(match[3]!)) {
    return { traceId: match[2]!, spanId: newSpanId(), parentSpanId: match[3]!, flags: match[4]! };
  }
  return { traceId: randomBytes(16).toString("hex"), spanId: newSpanId(), parentSpanId: undefined, flags: "01" };
}

/** The `traceparent` value this hop sends downstream: our span as the parent. */
export function formatTraceparent(trace: TraceContext): string {
  return `00-${trace.traceId}-${trace.spanId}-${trace.flags}`;
}

/** Runs `work` with `trace` as the current trace. */
export function withTrace<T>(trace: TraceContext, work: () => T): T {
  return storage.run(trace, work);
}

/** The current request's trace, if any. */
export function currentTrace(): TraceContext | undefined {
  return storage.getStore();
}

/** The `traceparent` to put on an outbound call made now, or undefined outside a request. */
export function outboundTraceparent(): string | undefined {
  const trace = storage.getStore();
  return trace ? formatTraceparent(trace) : undefined;
}
