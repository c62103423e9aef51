/**
 * Asynchronous jobs: any POST operation sent with `Prefer: respond-async` answers 202 and
 * a job to follow, wait for, stream events from, cancel, and fetch the result of. Needs a server
 * that serves `/api/v1/jobs`.
 */
import { APIUserAbortError, AtelierError, errorFromResponse } from "../errors.js";
import type { HttpClient, RequestOptions, ResponseMeta } from "../http-client.js";
import { sleep, metaOf } from "../http-client.js";
import { imageRequestBody } from "../image-request.js";
import { TERMINAL_JOB_STATUSES, type JobData, type JobEvent, type JobList, type JobProgress, type ListJobsParams, type WebhookSecret } from "../jobs-types.js";
import { fillPath, pathOf, type JobOperation } from "../operations.js";
import { withImages, withMeta } from "../result.js";
import { readEvents } from "../sse.js";
import type { APIResult, OperationTypes } from "../types.js";

export interface WaitOptions {
  /** Called whenever the job's status or progress changes. */
  onProgress?: (job: Job<unknown>) => void;
  /** Milliseconds between polls at first; grows to 2 s. Default 250. */
  pollInterval?: number;
  signal?: AbortSignal;
  /** Milliseconds to wait at most; default no limit. */
  timeout?: number;
}

/** A job running `operation`; {@link Job.wait} resolves to that operation's result type. */
export class Job<R = Record<string, unknown>> {
  constructor(
    private readonly jobs: Jobs,
    public data: JobData,
    public meta: ResponseMeta | undefined = undefined,
  ) {}

  get id(): string {
    return this.data.id;
  }
  get status(): JobData["status"] {
    return this.data.status;
  }
  get progress(): JobProgress | null | undefined {
    return this.data.progress;
  }
  get done(): boolean {
    return TERMINAL_JOB_STATUSES.includes(this.data.status);
  }

  /** Fetches the job's current state into this object. */
  async refresh(options?: RequestOptions): Promise<this> {
    const fresh = await this.jobs.get(this.id, options);
    this.data = fresh.data;
    this.meta = fresh.meta;
    return this;
  }

  async cancel(options?: RequestOptions): Promise<this> {
    const canceled = await this.jobs.cancel(this.id, options);
    this.data = canceled.data;
    return this;
  }

  events(options?: RequestOptions & { lastEventId?: string }): AsyncGenerator<JobEvent> {
    return this.jobs.events(this.id, options);
  }

  /**
   * Polls until the job has finished and returns its result: the same body the synchronous call
   * gives (images as {@link AtelierImage}s). A failed job throws its error as an {@link AtelierError};
   * a canceled one throws with code `CANCELED`.
   */
  async wait(options: WaitOptions = {}): Promise<R> {
    const started = Date.now();
    let interval = options.pollInterval ?? 250;
    let seen = JSON.stringify([this.data.status, this.data.progress]);
    options.onProgress?.(this);
    while (!this.done) {
      if (options.timeout !== undefined && Date.now() - started > options.timeout) {
        throw new AtelierError(`Job ${this.id} did not finish within ${options.timeout} ms (still ${this.status}).`, { code: "WAIT_TIMEOUT" });
      }
      await sleep(interval, options.signal).catch((cause: unknown) => {
        throw new APIUserAbortError("Waiting for the job was aborted.", { code: "ABORTED", cause });
      });
      interval = Math.min(interval * 1.5, 2_000);
      await this.refresh(options.signal ? { signal: options.signal } : undefined);
      const now = JSON.stringify([this.data.status, this.data.progress]);
      if (now !== seen) {
        seen = now;
        options.onProgress?.(this);
      }
    }
    return this.outcome();
  }

  private outcome(): R {
    if (this.data.status === "succeeded" && this.data.result) {
      const result = this.data.result;
      return (Array.isArray(result.data) ? withImages(result as { data: never[] }) : result) as R;
    }
    if (this.data.status === "canceled") throw new AtelierError(`Job ${this.id} was canceled.`, { code: "CANCELED" });
    const error = this.data.error;
    // The same class the synchronous call would have thrown (BadRequestError for INVALID_INPUT, ...).
    if (error && typeof error.status === "number") throw errorFromResponse(error.status, new Headers(), error, null, undefined);
    throw new AtelierError(error?.message ?? `Job ${this.id} failed.`, { code: error?.code ?? "JOB_FAILED", requestId: error?.requestId ?? null, issues: error?.issues });
  }
}

export class Jobs {
  constructor(private readonly http: HttpClient) {}

  /**
   * Starts `operation` (a client method name such as `"tools.upscale"`) as a job and returns at once
   * with it queued; `params` are that method's.
   */
  async create<Op extends JobOperation>(operation: Op, params: OperationTypes[Op]["params"], options: RequestOptions = {}): Promise<Job<OperationTypes[Op]["result"]>> {
    const fields = params as Record<string, unknown>;
    const body = fields.image === undefined && fields.imageUrl === undefined ? fields : await imageRequestBody(fields);
    const { response, body: bytes } = await this.http.send({
      ...options,
      method: "POST",
      path: pathOf(operation),
      body,
      headers: { prefer: "respond-async", ...options.headers },
    });
    if (response.status !== 202) {
      throw new AtelierError(`The server answered ${response.status} instead of 202 Accepted: it does not run jobs (Prefer: respond-async).`, {
        status: response.status,
        code: "JOBS_UNSUPPORTED",
        requestId: response.headers.get("x-request-id"),
      });
    }
    return new Job<OperationTypes[Op]["result"]>(this, JSON.parse(new TextDecoder().decode(bytes)) as JobData, metaOf(response));
  }

  async get(id: string, options: RequestOptions = {}): Promise<Job> {
    const { data, meta } = await this.http.json<JobData>({ ...options, method: "GET", path: fillPath(pathOf("jobs.get"), { id }) });
    return new Job(this, data, meta);
  }

  /** One page of the caller's jobs, newest first; pass `nextCursor` back as `cursor` for the next. */
  async list(params: ListJobsParams = {}, options: RequestOptions = {}): Promise<APIResult<JobList>> {
    const { data, meta } = await this.http.json<JobList>({ ...options, method: "GET", path: pathOf("jobs.list"), query: { ...params } });
    return withMeta(data, meta);
  }

  /** Cancels a queued or running job; a finished one answers {@link ConflictError} (not retried). */
  async cancel(id: string, options: RequestOptions = {}): Promise<Job> {
    const { data, meta } = await this.http.json<JobData>({ ...options, method: "DELETE", path: fillPath(pathOf("jobs.cancel"), { id }), noRetryStatuses: [409] });
    return new Job(this, data, meta);
  }

  /** The finished job's image as raw bytes with its media type. */
  async result(id: string, options: RequestOptions = {}): Promise<{ bytes: Uint8Array; mimeType: string; meta: ResponseMeta }> {
    const { response, body } = await this.http.send({ ...options, method: "GET", path: fillPath(pathOf("jobs.result"), { id }), headers: { accept: "image/*", ...options.headers } });
    return { bytes: body ?? new Uint8Array(), mimeType: response.headers.get("content-type") ?? "application/octet-stream", meta: metaOf(response) };
  }

  /**
   * The job's events as they happen (`for await (const event of client.jobs.events(id))`). A dropped
   * stream is resumed with `Last-Event-ID`, so no event is lost or repeated; the iteration ends when
   * the server closes the stream after the job finished.
   */
  async *events(id: string, options: RequestOptions & { lastEventId?: string } = {}): AsyncGenerator<JobEvent> {
    let lastEventId = options.lastEventId;
    let finished = false;
    let failures = 0;
    const maxRetries = options.maxRetries ?? this.http.options.maxRetries;
    while (!finished) {
      const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers, ...(lastEventId ? { "last-event-id": lastEventId } : {}) };
      const { response } = await this.http.send({ ...options, method: "GET", path: fillPath(pathOf("jobs.events"), { id }), headers }, true);
      try {
        for await (const event of readEvents(response.body!)) {
          failures = 0;
          if (event.id !== undefined) lastEventId = event.id;
          const data = parseData(event.data);
          if (isTerminal(event.event)) finished = true;
          yield { id: event.id, event: event.event, data };
        }
        // A clean end without a final event means the server closed early: resume from the last id.
        if (!finished && ++failures > maxRetries) return;
      } catch (error) {
        if (options.signal?.aborted || ++failures > maxRetries) throw error;
        await sleep(250 * failures, options.signal);
      }
    }
  }
}

function parseData(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The job has finished with this event (the server then closes the stream itself). */
function isTerminal(event: string): boolean {
  return event === "result" || event === "error";
}

/** The signing secret of the webhooks a job's `webhookUrl` receives. */
export class Webhooks {
  constructor(private readonly http: HttpClient) {}

  /** The key's secret, made on first use. */
  async secret(options: RequestOptions = {}): Promise<APIResult<WebhookSecret>> {
    const { data, meta } = await this.http.json<WebhookSecret>({ ...options, method: "GET", path: pathOf("webhooks.secret") });
    return withMeta(data, meta);
  }

  /** Replaces the key's secret; deliveries are signed with the new one from now on. */
  async rotateSecret(options: RequestOptions = {}): Promise<APIResult<WebhookSecret>> {
    const { data, meta } = await this.http.json<WebhookSecret>({ ...options, method: "POST", path: pathOf("webhooks.rotateSecret"), body: {} });
    return withMeta(data, meta);
  }
}
