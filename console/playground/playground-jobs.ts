/**
 * The playground's view of the user's jobs: a session call (session-calls.ts) answers with its job,
 * and the page follows it here, with the session, since it holds no key secret to call
 * `/api/v1/jobs` with. Only the owner of the job's key sees it (console/pages/job-view.ts), as on
 * the Jobs pages; result images are served by the Jobs pages' own route (`/jobs/{id}/images/{n}`).
 * Also the gallery: the user's recent image results.
 */
import type express from "express";
import type { Request, Response } from "express";
import { AtelierError } from "../../core/errors.js";
import { JOB_OPERATIONS } from "../../jobs/job-operations.js";
import { isFinished, operationName, publicJobError, type JobRecord } from "../../jobs/job-record.js";
import type { JobService } from "../../jobs/job-service.js";
import type { User } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";
import { progressLabel, visibleJob } from "../pages/job-view.js";
import { currentUser, requireSession } from "../server/pages.js";

/** Where the Jobs pages serve a result's image `index`. */
export function resultImageUrl(jobId: string, index: number): string {
  return `/jobs/${encodeURIComponent(jobId)}/images/${index}`;
}

/** A result with its images' stand-ins replaced by the links that serve them. */
function linkedResult(job: JobRecord): unknown {
  const result = job.result as { data?: unknown } | null;
  if (!result || !Array.isArray(result.data)) return result;
  return { ...result, data: result.data.map((image: object, index) => ({ ...image, url: resultImageUrl(job.id, index) })) };
}

/** The job as the playground shows it: status, progress, and the result or error once finished. */
function playgroundJob(job: JobRecord) {
  return {
    id: job.id,
    operation: operationName(job.operation),
    status: job.status,
    finished: isFinished(job.status),
    progress: job.progress,
    label: progressLabel(job),
    ...(job.status === "succeeded" ? { result: linkedResult(job) } : {}),
    ...(job.error ? { error: publicJobError(job.error) } : {}),
  };
}

export interface GalleryItem {
  jobId: string;
  operation: string;
  createdAt: Date;
  imageUrl: string;
  width: number;
  height: number;
}

/** The user's most recent succeeded image results, newest first, one image per job. */
export async function recentResults(services: AtelierServices, jobs: JobService, user: User, limit: number): Promise<GalleryItem[]> {
  const keys = await services.keys.list({ ownerId: user.id });
  if (keys.length === 0) return [];
  const page = await jobs.store.listForKeys(
    keys.map((key) => key.id),
    { status: "succeeded", limit: limit * 2 },
  );
  const items: GalleryItem[] = [];
  for (const job of page.jobs) {
    if (!JOB_OPERATIONS.get(job.operation)?.returnsImages) continue;
    const first = ((job.result as { data?: Array<{ width?: number; height?: number }> } | null)?.data ?? [])[0];
    if (!first) continue;
    // "upscale", "background-remove": the operation as the playground names its pages.
    items.push({ jobId: job.id, operation: operationName(job.operation).split("/").pop()!, createdAt: new Date(job.createdAtMs), imageUrl: resultImageUrl(job.id, 0), width: first.width ?? 0, height: first.height ?? 0 });
    if (items.length === limit) break;
  }
  return items;
}

async function jobAnswer(services: AtelierServices, jobs: JobService, req: Request, res: Response, cancel: boolean): Promise<void> {
  const found = await visibleJob(services, jobs, currentUser(res)!, String(req.params.id));
  if (!found) {
    res.status(404).json({ code: "NOT_FOUND", message: "There is no such job, or it is not yours." });
    return;
  }
  let { job } = found;
  if (cancel && !isFinished(job.status)) {
    try {
      job = await jobs.cancel(job.apiKeyId, job.id);
    } catch (error) {
      // Finished meanwhile: the answer says how it ended.
      if (!(error instanceof AtelierError && error.code === "JOB_CONFLICT")) throw error;
      job = (await jobs.store.get(job.id)) ?? job;
    }
  }
  res.json(playgroundJob(job));
}

/** `GET /playground/jobs/:id` (the job) and `POST /playground/jobs/:id/cancel` (CSRF-checked like every console POST). */
export function registerPlaygroundJobRoutes(router: express.Router, services: AtelierServices, jobs: JobService): void {
  router.get("/playground/jobs/:id", requireSession, (req, res, next) => {
    jobAnswer(services, jobs, req, res, false).catch(next);
  });
  router.post("/playground/jobs/:id/cancel", requireSession, (req, res, next) => {
    jobAnswer(services, jobs, req, res, true).catch(next);
  });
}
