/**
 * What the Jobs pages show of one job and who may see it. A job belongs to its API key; the
 * console shows it only to that key's owner — not to admins, who may manage every key but not read
 * what other people submitted ("visible only to the key that made it and, in the
 * console, its owner") — and answers anyone else as for a job that does not exist.
 */
import type { User } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";
import type { ApiKeyRecord } from "../../server/keys/api-key-store.js";
import type { JobService } from "../../jobs/job-service.js";
import { headOf, NO_IMAGES, replaceStrings, textLength, type StoredImages } from "../../jobs/job-images.js";
import { isFinished, type JobRecord } from "../../jobs/job-record.js";
import { html, type Html } from "../server/html.js";
import { ownsKey } from "./key-owner.js";

/** Job ids are `job_` and 16 base64url characters; anything far longer is not looked up. */
const MAX_JOB_ID_LENGTH = 64;

/** The keys whose jobs `user` may see: the ones they own, whatever their role. */
export function visibleKeys(services: AtelierServices, user: User): Promise<ApiKeyRecord[]> {
  return services.keys.list({ ownerId: user.id });
}

/** The job and its key when `user` may see it; null otherwise, as for an unknown id. */
export async function visibleJob(services: AtelierServices, jobs: JobService, user: User, id: string): Promise<{ job: JobRecord; key: ApiKeyRecord } | null> {
  if (typeof id !== "string" || id.length > MAX_JOB_ID_LENGTH) return null;
  const job = await jobs.store.get(id);
  if (!job) return null;
  const key = await services.keys.get(job.apiKeyId);
  return key && ownsKey(user, key) ? { job, key } : null;
}

/** "Tiles: 3 of 9 (33%)", "Queued", "Finished (100%)": the words beside a progress bar (as the playground writes them). */
export function progressLabel(job: Pick<JobRecord, "status" | "progress">): string {
  const { progress } = job;
  const percent = `${Math.round(progress.fraction * 100)}%`;
  switch (job.status) {
    case "queued":
      return "Queued";
    case "succeeded":
      return "Finished (100%)";
    case "failed":
      return `Failed at ${percent}`;
    case "canceled":
      return `Canceled at ${percent}`;
    default:
      if (progress.steps > 0) return `${progress.stage.charAt(0).toUpperCase()}${progress.stage.slice(1)}: ${progress.step} of ${progress.steps} (${percent})`;
      return "Running";
  }
}

/**
 * A `<progress>` with its words: indeterminate while running without counted steps. `data-job-*`
 * attributes let jobs.js update it while the job runs.
 */
export function progressBar(job: JobRecord): Html {
  const label = progressLabel(job);
  const determinate = isFinished(job.status) || job.progress.steps > 0;
  return html`<span class="job-progress">
    <progress max="1"${determinate ? html` value="${job.progress.fraction}"` : html``} aria-label="Progress of ${job.id}" data-job-progress="${job.id}"></progress>
    <span class="job-progress-label" data-job-progress-label="${job.id}">${label}</span>
  </span>`;
}

export function statusBadge(job: Pick<JobRecord, "id" | "status">): Html {
  return html`<span class="status job-status-${job.status}" data-job-status="${job.id}">${job.status}</span>`;
}

/** Longest data URL shown whole; longer ones (images) are abbreviated in request and result JSON. */
const DATA_URL_SHOWN = 80;

const abbreviated = (head: string, length: number) => `${head}… (about ${((length * 0.75) / 1024).toFixed(1)} KiB)`;

/**
 * `value` with every long `data:` URL replaced by its media type and size, for showing as JSON; a
 * stand-in of `images` (a job's stored images, job-images.ts) is described the same way from what
 * the record says of its image, without reading the bytes.
 */
export function abbreviateDataUrls(value: unknown, images: StoredImages = NO_IMAGES): unknown {
  return replaceStrings(value, (text) => {
    const image = images.get(text);
    if (image) return headOf(image).startsWith("data:") && textLength(image) > DATA_URL_SHOWN ? abbreviated(headOf(image), textLength(image)) : undefined;
    if (!text.startsWith("data:") || text.length <= DATA_URL_SHOWN) return undefined;
    return abbreviated(text.slice(0, text.indexOf(",") + 1), text.length);
  });
}
