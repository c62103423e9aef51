/**
 * What a `/trpc` request calls, read from its path: one procedure, or several comma-separated for a
 * batch (`/trpc/a,b?batch=1`). Each call of a batch is authenticated, metered and run on its own, so
 * the batch's length (LIMITS.trpcBatchCalls) is checked first, before its key or its body.
 */
import type { NextFunction, Request, Response } from "express";
import { AtelierError } from "../core/errors.js";
import { LIMITS } from "../core/limits.js";
import type { SendFailure } from "./json-body.js";
import { refuseUnreadBody } from "./refuse-unread-body.js";

/** The procedure paths (`prompt.improve`) a request under `/trpc` names, in order. */
export function trpcCallsOf(req: Request): string[] {
  return req.path.slice(1).split(",");
}

/**
 * Middleware refusing a batch of more than LIMITS.trpcBatchCalls.max calls with 400, the upload
 * unread. `sendFailure` answers for the request as a whole: one error, not one per call named.
 */
export function limitTrpcBatches(sendFailure: SendFailure) {
  const { max } = LIMITS.trpcBatchCalls;
  return (req: Request, res: Response, next: NextFunction): void => {
    const calls = trpcCallsOf(req).length;
    if (calls <= max) return next();
    const failure = new AtelierError("INVALID_INPUT", `Invalid request: expected at most ${max} calls in a tRPC batch but received ${calls}.`);
    refuseUnreadBody(req, res, () => sendFailure(req, res, failure));
  };
}
