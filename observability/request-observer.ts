/**
 * Per-request observability for the HTTP front door: the W3C trace context (continued from the
 * caller's `traceparent` or started here, then current for everything the request calls), the
 * request metrics, and one structured log line per request with its id, trace, key id (never the
 * secret), operation, model, status and duration.
 */
import { STATUS_CODES } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../core/logger.js";
import { OPERATIONS } from "../contract/operations.js";
import { httpRequestDuration, httpRequests, httpRequestsInFlight, quotaRejections } from "./metrics.js";
import { formatTraceparent, traceFromHeader, withTrace } from "./trace-context.js";

/** What procedures add to their request's log line (see RequestContext.note). */
export interface RequestNotes {
  keyId?: string;
  model?: string;
}

export interface Operation {
  /** The tRPC procedure path (`tools.upscale`), the same for REST and tRPC callers; or a fixed name. */
  operation: string;
  transport: "rest" | "trpc" | "health" | "other";
}

/** REST path → operation id, from the list of operations; one label set per real operation. */
function restOperations(apiPrefix: string): Map<string, string> {
  return new Map(OPERATIONS.map((operation) => [`${apiPrefix}${operation.path}`, operation.id]));
}

const PROCEDURE_NAMES: ReadonlySet<string> = new Set(OPERATIONS.map((operation) => operation.id));

/**
 * Classifies a request without letting client-chosen paths create new metric labels: every
 * operation is a procedure path, `trpc.batch`, a health path, `openapi` or `unknown`.
 */
export function operationResolver(apiPrefix: string, healthPaths: readonly string[]): (path: string) => Operation {
  const rest = restOperations(apiPrefix);
  return (path) => {
    const clean = path.replace(/\/+$/, "") || "/";
    const restName = rest.get(clean);
    if (restName) return { operation: restName, transport: "rest" };
    if (clean.startsWith("/trpc/")) {
      const names = clean.slice("/trpc/".length).split(",");
      // A batch names any mix of procedures, in any order and number: one label for them all.
      if (names.length > 1) return { operation: "trpc.batch", transport: "trpc" };
      return { operation: PROCEDURE_NAMES.has(names[0]!) ? names[0]! : "unknown", transport: "trpc" };
    }
    if (healthPaths.includes(clean)) return { operation: clean.slice(1), transport: "health" };
    if (clean === `${apiPrefix}/v1/openapi.json`) return { operation: "openapi", transport: "rest" };
    return { operation: "unknown", transport: "other" };
  };
}

/** What a response cut off before it was complete counts as: the client's 499, as nginx names it. */
const CLIENT_CLOSED = 499;

/** The status as a metric label: a standard HTTP status or 499, else "other", so no label value is open-ended. */
function statusLabel(status: number): string {
  return status === CLIENT_CLOSED || Object.hasOwn(STATUS_CODES, status) ? String(status) : "other";
}

export function requestNotes(res: Response): RequestNotes {
  return ((res.locals.notes as RequestNotes | undefined) ??= {});
}

/** Express middleware; mount right after the request id is assigned. */
export function observeRequests(logger: Logger, classify: (path: string) => Operation) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    const trace = traceFromHeader(req.get("traceparent"));
    res.locals.trace = trace;
    const { operation, transport } = classify(req.path);
    httpRequestsInFlight.inc();
    res.once("close", () => {
      httpRequestsInFlight.dec();
      const seconds = (performance.now() - started) / 1000;
      const code = res.writableFinished ? res.statusCode : CLIENT_CLOSED;
      const status = statusLabel(code);
      httpRequests.inc({ operation, transport, status });
      httpRequestDuration.observe({ operation, transport, status }, seconds);
      if (status === "429") quotaRejections.inc({ operation });
      const notes = requestNotes(res);
      const line = {
        requestId: res.locals.requestId as string,
        traceId: trace.traceId,
        spanId: trace.spanId,
        parentSpanId: trace.parentSpanId,
        method: req.method,
        path: req.path,
        operation,
        status: code,
        ms: Math.round(seconds * 1000),
        keyId: notes.keyId,
        model: notes.model,
      };
      if (transport === "health") logger.debug(line, "request");
      else logger.info(line, "request");
    });
    // The caller learns the trace id to quote (W3C trace-context-2 `traceresponse`).
    res.setHeader("traceresponse", formatTraceparent(trace));
    withTrace(trace, next);
  };
}

/** Re-enters the request's trace: body parsers resume the chain from stream events, outside it. */
export function inRequestTrace(res: Response, work: () => void): void {
  const trace = res.locals.trace as ReturnType<typeof traceFromHeader> | undefined;
  if (trace) withTrace(trace, work);
  else work();
}
