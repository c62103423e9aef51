/**
 * Graceful stop on SIGTERM/SIGINT: readiness turns 503 at once (load balancers stop sending
 * traffic), the listener stops taking connections, requests already running get up to
 * ATELIER_SHUTDOWN_GRACE_MS to finish, then `stop` drains the workers' gRPC calls and closes the
 * stores, and the process exits 0. A second signal exits at once with 1.
 */
import type http from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../../core/logger.js";
import { AtelierError } from "../../core/errors.js";
import { sendError } from "../../facade/error-responses.js";
import type { Readiness } from "../health/readiness.js";

export interface ShutdownPlan {
  logger: Logger;
  readiness: Readiness;
  /** The HTTP listener, or none (a worker-only process). */
  server?: http.Server;
  graceMs: number;
  /**
   * Closes everything else (workers, stores, metrics); runs after the HTTP requests are done.
   * `graceEndsAtMs` (epoch ms) is when the grace period that began with the signal ends: work still
   * running then (webhook attempts) is cut off.
   */
  stop(graceEndsAtMs: number): Promise<void>;
  exit?: (code: number) => void;
}

/** Express middleware: while draining, a request that still arrives on an open connection is refused. */
export function refuseWhileDraining(readiness: Readiness) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    if (!readiness.draining) return next();
    res.setHeader("Connection", "close");
    sendError(res, new AtelierError("WORKER_UNAVAILABLE", "This server is shutting down; retry the request (another instance will take it).", { retryAfterSeconds: 1 }));
  };
}

/** Stops the HTTP listener, waiting up to `graceMs` for running requests; true when all finished. */
export function closeHttpServer(server: http.Server, graceMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.closeAllConnections();
      resolve(false);
    }, graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve(true);
    });
    server.closeIdleConnections();
  });
}

export async function shutDown(plan: ShutdownPlan, signal: string): Promise<number> {
  const { logger, readiness } = plan;
  const started = Date.now();
  readiness.startDraining();
  logger.info({ signal, graceMs: plan.graceMs }, "shutting down: not ready, finishing requests in flight");
  if (plan.server) {
    const finished = await closeHttpServer(plan.server, plan.graceMs);
    if (!finished) logger.warn({ graceMs: plan.graceMs }, "requests still running after the grace period were cut off");
  }
  await plan.stop(started + plan.graceMs);
  logger.info({ ms: Date.now() - started }, "shut down cleanly");
  return 0;
}

/** Installs the signal handlers. */
export function installGracefulShutdown(plan: ShutdownPlan): void {
  const exit = plan.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      plan.logger.warn({ signal }, "second signal: exiting now");
      exit(1);
      return;
    }
    stopping = true;
    shutDown(plan, signal).then(exit, (error: unknown) => {
      plan.logger.error({ err: error }, "shutdown failed");
      exit(1);
    });
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
