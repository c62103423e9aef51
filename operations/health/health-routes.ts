/**
 * `GET /healthz` (the process answers) and `GET /readyz` (it should get traffic: 200, or 503 with
 * the list of what is not ready). Outside `/api`: no key, no quota, nothing metered.
 */
import { Router } from "express";
import type { Readiness } from "./readiness.js";

export const HEALTH_PATH = "/healthz";
export const READY_PATH = "/readyz";

export function healthRoutes(readiness: Readiness): Router {
  const router = Router();
  const started = Date.now();
  router.get(HEALTH_PATH, (_req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json({ status: "ok", uptimeSeconds: Math.round((Date.now() - started) / 1000) });
  });
  router.get(READY_PATH, async (_req, res, next) => {
    try {
      const report = await readiness.report();
      res.setHeader("Cache-Control", "no-store");
      if (!report.ready) res.setHeader("Retry-After", "5");
      res.status(report.ready ? 200 : 503).json({ status: report.ready ? "ready" : "not ready", ...report });
    } catch (error) {
      next(error);
    }
  });
  return router;
}
