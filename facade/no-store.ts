/**
 * `Cache-Control: no-store` on every answer of the API, REST and tRPC, errors included. Its
 * answers are one key's own: results (JSON, raw images, job results, event streams), the webhook
 * signing secret, jobs and quota state, so no browser or shared cache may keep any of them. Set
 * before any route runs, so an answer says it however it is written. The console's pages say it
 * too (console/server/security-headers.ts); its static assets and the health endpoints carry
 * nothing of anyone's.
 */
import type { NextFunction, Request, Response } from "express";

export const NO_STORE = "no-store";

export function noStoreAnswers(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Cache-Control", NO_STORE);
  next();
}
