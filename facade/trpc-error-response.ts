/**
 * A failure the facade finds before tRPC runs (a refused key, body or media type on `/trpc`),
 * written in tRPC's own error shape, through the router's error formatter, so tRPC clients read it
 * like any procedure's error (`error.data.code`, `httpStatus`, `requestId`).
 */
import type { Request, Response } from "express";
import { getErrorShape } from "@trpc/server/unstable-core-do-not-import";
import type { AtelierError } from "../core/errors.js";
import { httpHeadersOf, httpStatusOf } from "../server/http-error-meta.js";
import { appRouter } from "../server/router.js";
import { toTRPCError } from "../server/trpc-errors.js";
import { requestIdOf } from "./request-id.js";

export function sendTrpcError(req: Request, res: Response, failure: AtelierError): void {
  if (res.headersSent) return;
  const paths = req.path.slice(1).split(",");
  const requestId = requestIdOf(res);
  const shapes = paths.map((path) => ({
    error: getErrorShape({
      config: appRouter._def._config,
      error: toTRPCError(failure),
      type: req.method === "GET" ? "query" : "mutation",
      path,
      input: undefined,
      ctx: { requestId } as never,
    }),
  }));
  res.status(httpStatusOf(failure));
  for (const [name, value] of Object.entries(httpHeadersOf(failure))) res.setHeader(name, value);
  res.json(req.query.batch === "1" ? shapes : shapes[0]);
}
