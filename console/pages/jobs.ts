/**
 * The Jobs pages: the jobs of the signed-in user's own keys (job-view.ts says why admins see no
 * one else's), newest first with status and key filters and "older" pages; one job's status,
 * progress, timings, error, webhook attempts and result (images served by a session-checked
 * route, since the console never holds an API key secret); Cancel, through the same path as
 * `DELETE /api/v1/jobs/{id}`. Running jobs update live: jobs.js polls `/jobs/{id}/state`.
 */
import type express from "express";
import type { Request, Response } from "express";
import { z } from "zod";
import { AtelierError } from "../../core/errors.js";
import { JOB_OPERATIONS } from "../../jobs/job-operations.js";
import { isFinished, JOB_STATUSES, operationName, type JobRecord, type PublicJob } from "../../jobs/job-record.js";
import type { JobService } from "../../jobs/job-service.js";
import type { StoredImages } from "../../jobs/job-images.js";
import { dataUrlBytes, MEDIA_TYPES } from "../../jobs/raw-image.js";
import type { AtelierServices } from "../../server/context.js";
import type { ApiKeyRecord } from "../../server/keys/api-key-store.js";
import { csrfField } from "../server/csrf.js";
import { html, type Html } from "../server/html.js";
import { currentUser, redirect, registerPage, requireSession, type PageRequest, type PageResponse } from "../server/pages.js";
import { count, time } from "./format.js";
import { abbreviateDataUrls, progressBar, progressLabel, statusBadge, visibleJob, visibleKeys } from "./job-view.js";
import { keyPrefix } from "./keys.js";

const PAGE_SIZE = 20;
const SERVED_IMAGE_TYPES = new Set(Object.values(MEDIA_TYPES));

const listQuery = z.object({
  status: z.enum(JOB_STATUSES).optional().catch(undefined),
  key: z.string().max(64).optional(),
  before: z.string().max(100).optional(),
});

const at = (ms: number | null) => (ms === null ? null : new Date(ms));

function notFound(): PageResponse {
  return { status: 404, title: "Job not found", main: html`<p>There is no such job, or it is not yours.</p><p><a href="/jobs">Back to jobs</a></p>` };
}

function listLink(filters: { status?: string; key?: string; before?: string }): string {
  const query = new URLSearchParams(Object.entries(filters).filter((entry): entry is [string, string] => Boolean(entry[1])));
  return query.size > 0 ? `/jobs?${query}` : "/jobs";
}

function filterForm(keys: ApiKeyRecord[], status: string | undefined, keyId: string | undefined): Html {
  const option = (value: string, label: string, selected: boolean) => html`<option value="${value}"${selected ? html` selected` : html``}>${label}</option>`;
  return html`<form method="get" action="/jobs" class="filters">
    <div class="field">
      <label for="jobs-status">Status</label>
      <select id="jobs-status" name="status">
        ${option("", "Any status", status === undefined)}
        ${JOB_STATUSES.map((value) => option(value, value, value === status))}
      </select>
    </div>
    <div class="field">
      <label for="jobs-key">Key</label>
      <select id="jobs-key" name="key">
        ${option("", "Every key", keyId === undefined)}
        ${keys.map((key) => option(key.id, `${key.name} (${keyPrefix(key)})`, key.id === keyId))}
      </select>
    </div>
    <button type="submit" class="button">Show</button>
  </form>`;
}

async function jobsPage(page: PageRequest, jobs: JobService): Promise<Html | PageResponse> {
  const { services } = page;
  const user = page.user!;
  const parsed = listQuery.safeParse(page.query);
  const query = parsed.success ? parsed.data : {};
  const keys = await visibleKeys(services, user);
  const keyId = query.key || undefined;
  if (keyId !== undefined && !keys.some((key) => key.id === keyId)) {
    return { status: 404, title: "Key not found", main: html`<p>There is no such key, or it is not yours.</p><p><a href="/jobs">Back to jobs</a></p>` };
  }
  const listed = await jobs.store.listForKeys(keyId ? [keyId] : keys.map((key) => key.id), { status: query.status, cursor: query.before || undefined, limit: PAGE_SIZE });
  const keysById = new Map(keys.map((key) => [key.id, key]));
  const rows = listed.jobs.map((job) => {
    const key = keysById.get(job.apiKeyId);
    return html`<tr${isFinished(job.status) ? html`` : html` data-job-live="${job.id}"`}>
      <th scope="row" data-label="Job"><a href="/jobs/${job.id}"><code>${job.id}</code></a></th>
      <td data-label="Key">${key ? html`<a href="/keys/${key.id}">${key.name}</a>` : html`<code>atl_${job.apiKeyId}_…</code>`}</td>
      <td data-label="Operation"><code>${operationName(job.operation)}</code></td>
      <td data-label="Status">${statusBadge(job)}</td>
      <td data-label="Progress">${progressBar(job)}</td>
      <td data-label="Created">${time(at(job.createdAtMs))}</td>
      <td data-label="Finished" data-job-finished="${job.id}">${time(at(job.finishedAtMs), "–")}</td>
    </tr>`;
  });
  const filters = { status: query.status, key: keyId };
  const table =
    listed.jobs.length === 0
      ? html`<p>${query.before ? "No older jobs." : query.status || keyId ? "No jobs match these filters." : html`No jobs yet. Submit one with <code>Prefer: respond-async</code> (or run one in the <a href="/playground">Playground</a>).`}</p>`
      : html`<div class="table-wrap"><table class="data-table jobs-table">
          <caption class="visually-hidden">Jobs of your keys, newest first</caption>
          <thead><tr><th scope="col">Job</th><th scope="col">Key</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Created</th><th scope="col">Finished</th></tr></thead>
          <tbody>${rows}</tbody>
        </table></div>`;
  return html`
    <p class="lead">Jobs of your API keys, newest first: calls made with <code>Prefer: respond-async</code>, <code>Prefer: wait</code>, an <code>Idempotency-Key</code> or a <code>webhookUrl</code>. Running jobs update live. Times are UTC.</p>
    ${filterForm(keys, query.status, keyId)}
    ${table}
    <nav class="pager" aria-label="Job pages">
      ${query.before ? html`<a href="${listLink(filters)}">Newest jobs</a>` : html``}
      ${listed.nextCursor ? html`<a href="${listLink({ ...filters, before: listed.nextCursor })}" rel="next">Older jobs</a>` : html``}
    </nav>`;
}

/** A JSON body in a box that scrolls when long; focusable, so keyboard users can scroll it too. `images`: the job's stored images. */
function json(value: unknown, images?: StoredImages): Html {
  return html`<pre class="job-json" tabindex="0"><code>${JSON.stringify(abbreviateDataUrls(value, images), null, 2)}</code></pre>`;
}

interface ImageResult {
  url: string;
  mimeType: string;
  width: number;
  height: number;
}

function imagesOf(result: unknown): ImageResult[] {
  const data = (result as { data?: unknown } | null)?.data;
  return Array.isArray(data) ? (data as ImageResult[]) : [];
}

function extensionOf(mimeType: string): string {
  return Object.entries(MEDIA_TYPES).find(([, type]) => type === mimeType)?.[0] ?? "bin";
}

function resultSection(job: JobRecord): Html {
  if (job.status !== "succeeded") return html``;
  if (job.result === null) return html`<section aria-labelledby="result-heading"><h2 id="result-heading">Result</h2><p>The result was deleted after the retention period (<code>ATELIER_JOB_RESULT_RETENTION_HOURS</code>).</p></section>`;
  if (!JOB_OPERATIONS.get(job.operation)?.returnsImages) return html`<section aria-labelledby="result-heading"><h2 id="result-heading">Result</h2>${json(job.result, job.images)}</section>`;
  const images = imagesOf(job.result);
  const operation = operationName(job.operation).replace(/\//g, "-");
  return html`<section aria-labelledby="result-heading">
    <h2 id="result-heading">Result</h2>
    <div class="job-images">${images.map((image, index) => {
      const extension = extensionOf(image.mimeType);
      const source = `/jobs/${job.id}/images/${index}`;
      return html`<figure>
        <img src="${source}" alt="Result image ${index + 1} of ${images.length}, ${image.width} × ${image.height} pixels" width="${image.width}" height="${image.height}">
        <figcaption><span>${image.width} × ${image.height} px, ${image.mimeType}</span>
          <a class="button button-quiet" href="${source}" download="atelier-${operation}-${job.id}${images.length > 1 ? `-${index + 1}` : ""}.${extension}">Download ${extension.toUpperCase()}<span class="visually-hidden"> of image ${index + 1}</span></a></figcaption>
      </figure>`;
    })}</div>
    <details><summary>Response body</summary>${json(job.result, job.images)}</details>
  </section>`;
}

function webhookSection(view: PublicJob): Html {
  const webhook = view.webhook;
  if (!webhook) return html``;
  return html`<section aria-labelledby="webhook-heading">
    <h2 id="webhook-heading">Webhook</h2>
    <dl class="details">
      <dt>URL</dt><dd><code>${webhook.url}</code></dd>
      <dt>Delivery</dt><dd>${webhook.status}</dd>
    </dl>
    ${
      webhook.attempts.length === 0
        ? html`<p class="muted">No delivery attempts yet.</p>`
        : html`<div class="table-wrap"><table class="data-table">
            <caption>Delivery attempts</caption>
            <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Receiver's status</th><th scope="col">Problem</th></tr></thead>
            <tbody>${webhook.attempts.map(
              (attempt, index) => html`<tr>
                <th scope="row" data-label="#">${index + 1}</th>
                <td data-label="Time">${time(new Date(attempt.at))}</td>
                <td data-label="Receiver's status">${attempt.statusCode ?? "No answer"}</td>
                <td data-label="Problem">${attempt.error ?? "–"}</td>
              </tr>`,
            )}</tbody>
          </table></div>`
    }
  </section>`;
}

function seconds(fromMs: number | null, toMs: number | null): string {
  return fromMs === null || toMs === null ? "–" : `${((toMs - fromMs) / 1000).toFixed(1)} s`;
}

async function jobDetail(page: PageRequest, jobs: JobService): Promise<PageResponse> {
  const found = await visibleJob(page.services, jobs, page.user!, page.params.id!);
  if (!found) return notFound();
  const { job, key } = found;
  const view = await jobs.view(job);
  const live = !isFinished(job.status);
  return {
    title: `Job ${job.id}`,
    main: html`<div class="job-detail"${live ? html` data-job-live="${job.id}" data-job-reload` : html``}>
      <dl class="details">
        <dt>Operation</dt><dd><code>${operationName(job.operation)}</code></dd>
        <dt>Key</dt><dd><a href="/keys/${key.id}">${key.name}</a> <code>${keyPrefix(key)}</code></dd>
        <dt>Status</dt><dd>${statusBadge(job)}${view.queuePosition !== undefined ? html` <span class="muted">(${count(view.queuePosition)} in the queue)</span>` : html``}</dd>
        <dt>Progress</dt><dd>${progressBar(job)}</dd>
        <dt>Created</dt><dd>${time(at(job.createdAtMs))}</dd>
        <dt>Started</dt><dd>${time(at(job.startedAtMs), "Not yet")}</dd>
        <dt>Finished</dt><dd>${time(at(job.finishedAtMs), "Not yet")}</dd>
        <dt>Waited, ran</dt><dd>${seconds(job.createdAtMs, job.startedAtMs)}, ${seconds(job.startedAtMs, job.finishedAtMs)}</dd>
        ${job.attempts > 1 ? html`<dt>Attempts</dt><dd>${job.attempts}</dd>` : html``}
        <dt>Result kept until</dt><dd>${time(at(job.resultExpiresAtMs), "–")}</dd>
        <dt>Request id</dt><dd><code>${job.requestId}</code></dd>
      </dl>
      ${
        live
          ? html`<form method="post" action="/jobs/${job.id}/cancel" class="form actions">
              ${csrfField(page.csrfToken)}
              <button type="submit" class="button button-danger">Cancel job</button>
            </form>`
          : html``
      }
      ${job.error ? html`<section aria-labelledby="error-heading"><h2 id="error-heading">Error (HTTP ${job.error.status})</h2>${json(job.error.body)}</section>` : html``}
      ${resultSection(job)}
      ${webhookSection(view)}
      <details><summary>Request body</summary>${json(job.input, job.images)}</details>
      <p><a href="/jobs">Back to jobs</a></p>
    </div>`,
  };
}

/** GET /jobs/:id/state: what jobs.js needs to update a running job on the page. */
async function jobState(services: AtelierServices, jobs: JobService, req: Request, res: Response): Promise<void> {
  const found = await visibleJob(services, jobs, currentUser(res)!, String(req.params.id));
  if (!found) {
    res.status(404).json({ error: "There is no such job, or it is not yours." });
    return;
  }
  const { job } = found;
  res.json({
    status: job.status,
    finished: isFinished(job.status),
    fraction: job.progress.fraction,
    determinate: isFinished(job.status) || job.progress.steps > 0,
    label: progressLabel(job),
    finishedAt: job.finishedAtMs === null ? null : new Date(job.finishedAtMs).toISOString(),
  });
}

/** The bytes of a result image's `url`: the stored image it stands for, or a data URL (a record stored with its images inline). */
async function imageBytes(jobs: JobService, job: JobRecord, url: string): Promise<{ bytes: Buffer; mediaType: string } | null> {
  const stored = job.images.get(url);
  if (!stored) return dataUrlBytes(url);
  if (stored.kind !== "image") return null;
  const bytes = await jobs.store.readImage(job.id, stored.blob);
  return bytes && { bytes, mediaType: stored.mimeType };
}

/** GET /jobs/:id/images/:index: one image of a succeeded job's result, as its bytes. */
async function jobImage(services: AtelierServices, jobs: JobService, req: Request, res: Response): Promise<void> {
  const found = await visibleJob(services, jobs, currentUser(res)!, String(req.params.id));
  const index = Number(req.params.index);
  const image = found && found.job.status === "succeeded" && JOB_OPERATIONS.get(found.job.operation)?.returnsImages ? imagesOf(found.job.result)[index] : undefined;
  const decoded = Number.isSafeInteger(index) && image ? await imageBytes(jobs, found!.job, image.url) : null;
  // Only the image types Atelier writes: never another type a result could claim.
  if (!decoded || !SERVED_IMAGE_TYPES.has(decoded.mediaType)) {
    res.status(404).type("text/plain").send("There is no such image, or it is not yours.");
    return;
  }
  res.type(decoded.mediaType).send(decoded.bytes);
}

export function registerJobPages(router: express.Router, services: AtelierServices, jobs: JobService): void {
  registerPage(router, services, {
    path: "/jobs",
    title: "Jobs",
    nav: { label: "Jobs", order: 25 },
    access: "signed-in",
    scripts: ["jobs.js"],
    styles: ["jobs.css"],
    get: (page) => jobsPage(page, jobs),
  });
  registerPage(router, services, {
    path: "/jobs/:id",
    title: "Job",
    access: "signed-in",
    scripts: ["jobs.js"],
    styles: ["jobs.css"],
    get: (page) => jobDetail(page, jobs),
  });
  registerPage(router, services, {
    path: "/jobs/:id/cancel",
    title: "Cancel job",
    access: "signed-in",
    post: async (page) => {
      const found = await visibleJob(services, jobs, page.user!, page.params.id!);
      if (!found) return notFound();
      const { job } = found;
      try {
        await jobs.cancel(job.apiKeyId, job.id);
      } catch (error) {
        if (error instanceof AtelierError && error.code === "JOB_CONFLICT") return redirect(`/jobs/${job.id}`, "The job had already finished; there was nothing to cancel.");
        throw error;
      }
      services.logger.info({ part: "console", userId: page.user!.id, jobId: job.id }, "job canceled in the console");
      return redirect(`/jobs/${job.id}`, "Job canceled.");
    },
  });
  router.get("/jobs/:id/state", requireSession, (req, res, next) => {
    jobState(services, jobs, req, res).catch(next);
  });
  router.get("/jobs/:id/images/:index", requireSession, (req, res, next) => {
    jobImage(services, jobs, req, res).catch(next);
  });
}
