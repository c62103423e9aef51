/** Small helpers the jobs tests share: authenticated GET/DELETE, waiting for a job's end, reading its events. */
import type { TestService } from "../support/test-service.js";

export interface JobBody {
  id: string;
  object: string;
  operation: string;
  status: string;
  progress: { fraction: number; step: number; steps: number; stage: string };
  queuePosition?: number;
  result?: Record<string, unknown> & { data?: { url: string; mimeType: string; width: number; height: number }[] };
  error?: { code: string; message: string; requestId: string };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  expiresAt: string | null;
}

export function call(service: TestService, method: string, apiPath: string, key?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${service.url}/api/v1${apiPath}`, { method, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } });
}

export async function getJob(service: TestService, key: string, id: string): Promise<JobBody> {
  const response = await call(service, "GET", `/jobs/${id}`, key);
  if (response.status !== 200) throw new Error(`GET job ${id}: ${response.status} ${await response.text()}`);
  return (await response.json()) as JobBody;
}

const FINISHED = ["succeeded", "failed", "canceled"];

/** Polls the job until it has finished (or `timeoutMs` passes). */
export async function finishedJob(service: TestService, key: string, id: string, timeoutMs = 60_000): Promise<JobBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(service, key, id);
    if (FINISHED.includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls until `check` holds for the job. */
export async function jobWhere(service: TestService, key: string, id: string, check: (job: JobBody) => boolean, timeoutMs = 60_000): Promise<JobBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(service, key, id);
    if (check(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} never matched; last ${JSON.stringify(job).slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function submitAsync(service: TestService, apiPath: string, body: unknown, key: string, headers: Record<string, string> = {}): Promise<JobBody> {
  const response = await service.post(apiPath, body, key, { prefer: "respond-async", ...headers });
  if (response.status !== 202) throw new Error(`submit ${apiPath}: ${response.status} ${await response.text()}`);
  return (await response.json()) as JobBody;
}

export interface SseEvent {
  id: number;
  event: string;
  data: unknown;
}

/** Reads a whole SSE response (it ends after the job's final event). */
export async function readEvents(response: Response): Promise<SseEvent[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.includes("data: "))
    .map((block) => {
      const field = (name: string) => block.split("\n").find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
      return { id: Number(field("id")), event: field("event")!, data: JSON.parse(field("data")!) as unknown };
    });
}
