/**
 * The REST operations, read from the list (contract/operations.ts): each is one route, calling its
 * procedure in-process through a tRPC caller. Calling the procedure directly (rather than through
 * trpc-to-openapi's HTTP handler, which rewrites error bodies into tRPC's own shape) keeps one error
 * path: the procedure's AtelierError goes straight to sendError.
 */
import type { Request, Response } from "express";
import type { TRPCError } from "@trpc/server";
import { asAtelierError } from "../core/errors.js";
import { OPERATIONS } from "../contract/operations.js";
import type { RequestContext } from "../server/context.js";
import { appRouter } from "../server/router.js";
import { atelierErrorOf } from "../server/trpc-errors.js";
import { sendError } from "./error-responses.js";
import { keepImage, sendResult } from "./result-responses.js";

export interface RestRoute {
  method: "GET" | "POST";
  /** Full path, e.g. `/api/v1/tools/upscale`. */
  path: string;
  /** The operation's id, its procedure's dotted path in the router, e.g. `tools.upscale`. */
  procedure: string;
}

export function restRoutes(prefix: string): RestRoute[] {
  return OPERATIONS.map((operation) => ({ method: operation.method, path: `${prefix}${operation.path}`, procedure: operation.id }));
}

type Call = (input: unknown) => Promise<unknown>;

/** An express handler that runs the route's procedure on the parsed body and writes the answer. */
export function restHandler(route: RestRoute, contextFor: (req: Request, res: Response) => RequestContext) {
  return async (req: Request, res: Response): Promise<void> => {
    // The answer is written here (sendResult), so the procedure hands its images over as bytes.
    const caller = appRouter.createCaller({ ...contextFor(req, res), keepImage: (image) => keepImage(res, image) }) as unknown as Record<string, unknown>;
    const call = route.procedure.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as Call;
    try {
      const data = await call(route.method === "POST" ? req.body : undefined);
      if (!res.headersSent) await sendResult(res, data);
    } catch (error) {
      // Every procedure error passes through the router's translateErrors middleware as a TRPCError.
      const failure = error instanceof Error && error.name === "TRPCError" ? atelierErrorOf(error as TRPCError) : asAtelierError(error);
      sendError(res, failure);
    }
  };
}
