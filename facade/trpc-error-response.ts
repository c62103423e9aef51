/**
 * A failure the facade finds before tRPC runs (a refused key, body or media type on `/trpc`),
 * written in tRPC's own error shape, through the router's error formatter, so tRPC clients read it
 * like any procedure's error (`error.data.code`, `httpStatus`, `requestId`).
 */
import type { Request, Response } from "express";
import type { AtelierError } from "../core/errors.js";
import { httpHeadersOf, httpStatusOf } from "../server/http-error-meta.js";
import { toTRPCError } from "../server/trpc-errors.js";
import { trpcErrorShape } from "../server/trpc.js";
import { requestIdOf } from "./request-id.js";
import { trpcCallsOf } from "./trpc-batch.js";

function errorShape(res: Response, failure: AtelierError, path: string | undefined) {
  return { error: trpcErrorShape(toTRPCError(failure), path, requestIdOf(res)) };
}

function send(res: Response, failure: AtelierError, body: unknown): void {
  res.status(httpStatusOf(failure));
  for (const [name, value] of Object.entries(httpHeadersOf(failure))) res.setHeader(name, value);
  res.json(body);
}

/** Refuses every call the request names: one error per call of a batch, as tRPC answers a batch. */
export function sendTrpcError(req: Request, res: Response, failure: AtelierError): void {
  if (res.headersSent) return;
  const shapes = trpcCallsOf(req).map((path) => errorShape(res, failure, path));
  send(res, failure, req.query.batch === "1" ? shapes : shapes[0]);
}

/** Refuses the request as a whole (a batch too long to answer call by call): one error, as tRPC answers a request it cannot read. */
export function sendTrpcRequestError(req: Request, res: Response, failure: AtelierError): void {
  if (res.headersSent) return;
  send(res, failure, errorShape(res, failure, undefined));
}
