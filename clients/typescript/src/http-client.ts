/**
 * One HTTP exchange with retries: the only place that calls `fetch`. Connection errors and
 * retryable statuses are tried again after a backoff (or `Retry-After`), each attempt under its own
 * timeout, all under the caller's AbortSignal; a POST keeps one `Idempotency-Key` across its tries so
 * the server can recognise a repeat.
 */
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AtelierError,
  errorFromResponse,
} from "./errors.js";
import { rateLimitOf, type RateLimitInfo } from "./rate-limit.js";
import { backoffMs, isRetryableCode, isRetryableStatus, retryAfterSeconds } from "./retry-policy.js";

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpClientOptions {
  apiKey: string | undefined;
  baseURL: string;
  /** Milliseconds per attempt. */
  timeout: number;
  maxRetries: number;
  /** A `Retry-After` above this many seconds is raised at once instead of waited for. */
  maxRetryAfter: number;
  fetch: FetchLike;
  defaultHeaders: Record<string, string>;
}

/** Options any single call takes, overriding the client's. */
export interface RequestOptions {
  /** Milliseconds per attempt. */
  timeout?: number;
  maxRetries?: number;
  signal?: AbortSignal;
  /** For POSTs: the key the server deduplicates on; one is generated per call when absent. */
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

export interface ApiRequest extends RequestOptions {
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  /** Sent as JSON; a FormData as `multipart/form-data` (fetch writes its Content-Type with the boundary). */
  body?: unknown;
  /** Statuses not to retry for this request even though they usually are (e.g. 409 on cancel). */
  noRetryStatuses?: number[];
  /** Statuses that are an answer for this request, not an error (503 "not ready" from /readyz). */
  acceptStatuses?: number[];
}

/** What every response carries besides its body. */
export interface ResponseMeta {
  status: number;
  requestId: string | null;
  rateLimit: RateLimitInfo | null;
  headers: Headers;
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

async function readAll(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

function parseErrorBody(response: Response, bytes: Uint8Array): unknown {
  const text = new TextDecoder().decode(bytes);
  if ((response.headers.get("content-type") ?? "").includes("json")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

export class HttpClient {
  constructor(readonly options: HttpClientOptions) {}

  url(path: string, query?: Record<string, string | number | undefined>): string {
    const url = new URL(this.options.baseURL.replace(/\/+$/, "") + path);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  headers(request: Pick<ApiRequest, "body" | "headers">, extra: Record<string, string> = {}): Record<string, string> {
    return {
      accept: "application/json",
      ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      ...(request.body === undefined || request.body instanceof FormData ? {} : { "content-type": "application/json" }),
      ...this.options.defaultHeaders,
      ...extra,
      ...request.headers,
    };
  }

  /**
   * Sends with retries. With `stream`, the successful response comes back unread (its timeout
   * covers the headers only); otherwise its body is read under the attempt's timeout.
   */
  async send(request: ApiRequest, stream = false): Promise<{ response: Response; body: Uint8Array | undefined }> {
    const maxRetries = request.maxRetries ?? this.options.maxRetries;
    const timeout = request.timeout ?? this.options.timeout;
    const idempotency: Record<string, string> = request.method === "POST" ? { "idempotency-key": request.idempotencyKey ?? newIdempotencyKey() } : {};
    const headers = this.headers(request, idempotency);
    const url = this.url(request.path, request.query);
    for (let attempt = 0; ; attempt++) {
      const retriesLeft = maxRetries - attempt;
      // A retried POST asks for the job (RFC 7240 respond-async): if the first try is still running
      // on a server with jobs, the same Idempotency-Key then answers 202 and that job, which the
      // resources follow, instead of a 409 collision. Servers without jobs ignore the preference.
      if (attempt === 1 && request.method === "POST" && !Object.keys(headers).some((name) => name.toLowerCase() === "prefer")) headers.prefer = "respond-async";
      let response: Response;
      let bytes: Uint8Array | undefined;
      try {
        ({ response, bytes } = await this.attempt(url, { method: request.method, headers, body: bodyOf(request) }, timeout, request.signal, stream));
      } catch (error) {
        if (!(error instanceof APIConnectionError) || retriesLeft <= 0) throw error;
        await this.wait(backoffMs(attempt), request.signal);
        continue;
      }
      if (response.ok) return { response, body: bytes };
      if (request.acceptStatuses?.includes(response.status)) return { response, body: bytes ?? (await readAll(response)) };
      const body = parseErrorBody(response, bytes ?? (await readAll(response).catch(() => new Uint8Array())));
      const retryAfter = retryAfterSeconds(response.headers);
      const code = typeof body === "object" && body !== null ? (body as { code?: unknown }).code : undefined;
      const retryable =
        retriesLeft > 0 &&
        isRetryableStatus(response.status) &&
        !request.noRetryStatuses?.includes(response.status) &&
        isRetryableCode(code) &&
        (retryAfter === undefined || retryAfter <= this.options.maxRetryAfter);
      if (!retryable) throw errorFromResponse(response.status, response.headers, body, rateLimitOf(response.headers), retryAfter);
      await this.wait(retryAfter === undefined ? backoffMs(attempt) : retryAfter * 1000, request.signal);
    }
  }

  /** Sends and parses a JSON body. */
  async json<T>(request: ApiRequest): Promise<{ data: T; meta: ResponseMeta }> {
    const { response, body } = await this.send(request);
    let data: T;
    try {
      data = JSON.parse(new TextDecoder().decode(body)) as T;
    } catch (cause) {
      throw new AtelierError(`The server answered ${response.status} with a body that is not JSON.`, { status: response.status, code: "INVALID_RESPONSE", requestId: response.headers.get("x-request-id"), cause });
    }
    return { data, meta: metaOf(response) };
  }

  private async wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await sleep(ms, signal);
    } catch (cause) {
      throw new APIUserAbortError("The request was aborted.", { code: "ABORTED", cause });
    }
  }

  /** One fetch (and body read) under its own timeout and the caller's signal, failures turned into typed errors. */
  private async attempt(
    url: string,
    init: RequestInit,
    timeout: number,
    signal: AbortSignal | undefined,
    stream: boolean,
  ): Promise<{ response: Response; bytes: Uint8Array | undefined }> {
    if (signal?.aborted) throw new APIUserAbortError("The request was aborted.", { code: "ABORTED", cause: signal.reason });
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await this.options.fetch(url, { ...init, signal: controller.signal });
      if (stream && response.ok) {
        // The stream outlives this attempt: the caller's signal still ends it, the timeout no longer.
        signal?.addEventListener("abort", () => void response.body?.cancel(signal.reason).catch(() => undefined), { once: true });
        return { response, bytes: undefined };
      }
      return { response, bytes: await readAll(response) };
    } catch (cause) {
      if (timedOut) throw new APITimeoutError(`No response within ${timeout} ms.`, { code: "TIMEOUT", cause });
      if (signal?.aborted) throw new APIUserAbortError("The request was aborted.", { code: "ABORTED", cause });
      throw new APIConnectionError(`Could not reach ${new URL(url).origin}: ${describeNetworkError(cause)}.`, { code: "CONNECTION_ERROR", cause });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** What fetch sends: a form as it is (each attempt writes it anew), anything else as JSON. */
function bodyOf(request: ApiRequest): string | FormData | null {
  if (request.body === undefined) return null;
  return request.body instanceof FormData ? request.body : JSON.stringify(request.body);
}

/** fetch says only "fetch failed"; the reason (ECONNREFUSED, "bad port", ...) is in its cause. */
function describeNetworkError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const inner = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof inner?.code === "string" ? inner.code : typeof inner?.message === "string" ? inner.message : undefined;
  return detail ? `${message} (${detail})` : message;
}

export function metaOf(response: Response): ResponseMeta {
  return { status: response.status, requestId: response.headers.get("x-request-id"), rateLimit: rateLimitOf(response.headers), headers: response.headers };
}
