/** Gives every request an id (or keeps a sane one the client sent) and echoes it in `X-Request-Id`. */
import { randomUUID } from "node:crypto";
import type { NextFunction, Request, Response } from "express";

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestIdOf(res: Response): string {
  return String(res.locals.requestId);
}

export function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const sent = req.get("x-request-id");
  const requestId = sent && CLIENT_REQUEST_ID.test(sent) ? sent : `req_${randomUUID().replaceAll("-", "")}`;
  res.locals.requestId = requestId;
  res.setHeader("X-Request-Id", requestId);
  next();
}
