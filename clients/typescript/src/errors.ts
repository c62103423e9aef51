/**
 * Every failure the client reports is an {@link AtelierError}; the HTTP status picks the subclass,
 * so callers can `catch (e) { if (e instanceof RateLimitError) ... }` without reading status codes.
 */
import type { RateLimitInfo } from "./rate-limit.js";

/** One problem with one input field, as the server reports it (`path` is dotted, e.g. `scale`). */
export interface FieldIssue {
  path: string;
  message: string;
}

export interface AtelierErrorFields {
  status?: number | undefined;
  code?: string | undefined;
  requestId?: string | null | undefined;
  issues?: FieldIssue[] | undefined;
  headers?: Headers | undefined;
  rateLimit?: RateLimitInfo | null | undefined;
  cause?: unknown;
}

export class AtelierError extends Error {
  /** HTTP status; undefined when no response arrived (connection failure, timeout, abort). */
  readonly status: number | undefined;
  /** The server's stable machine-readable code (`INVALID_INPUT`, `RATE_LIMITED`, ...) or a client-side one. */
  readonly code: string;
  /** The server's request id (`X-Request-Id`): quote it when reporting a problem. */
  readonly requestId: string | null;
  /** For invalid input: one entry per bad field. */
  readonly issues: FieldIssue[];
  readonly headers: Headers | undefined;
  readonly rateLimit: RateLimitInfo | null;

  constructor(message: string, fields: AtelierErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.status = fields.status;
    this.code = fields.code ?? "UNKNOWN";
    this.requestId = fields.requestId ?? null;
    this.issues = fields.issues ?? [];
    this.headers = fields.headers;
    this.rateLimit = fields.rateLimit ?? null;
  }
}

/** 400, and the other statuses that mean the request itself must change (405, 413, 415, 422). */
export class BadRequestError extends AtelierError {}
/** 401: no key, or an unknown or revoked one. */
export class AuthenticationError extends AtelierError {}
/** 403: the key may not do this. */
export class PermissionDeniedError extends AtelierError {}
/** 404 (or 410): no such endpoint or resource (a job of another key, a result past its retention). */
export class NotFoundError extends AtelierError {}
/** 409: a conflicting request (a duplicate still in flight, a job already finished). */
export class ConflictError extends AtelierError {}
/** 429: the key's quota is spent. */
export class RateLimitError extends AtelierError {
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;
  /** When the quota window resets (from `X-RateLimit-Reset`, else `Retry-After`). */
  readonly resetAt: Date | undefined;

  constructor(message: string, fields: AtelierErrorFields & { retryAfter?: number | undefined } = {}) {
    super(message, fields);
    this.retryAfter = fields.retryAfter;
    this.resetAt = fields.rateLimit?.resetAt ?? (fields.retryAfter === undefined ? undefined : new Date(Date.now() + fields.retryAfter * 1000));
  }
}
/** 500, 502, 504 and other server failures. */
export class InternalServerError extends AtelierError {}
/** 503: a model is not installed, or the server is busy or a store unreachable. */
export class ServiceUnavailableError extends AtelierError {}
/** No response: the connection failed or was dropped. */
export class APIConnectionError extends AtelierError {}
/** No response within the request's timeout. */
export class APITimeoutError extends APIConnectionError {}
/** The caller aborted the request through its AbortSignal. */
export class APIUserAbortError extends AtelierError {}

interface ErrorBody {
  code?: unknown;
  message?: unknown;
  requestId?: unknown;
  issues?: unknown;
}

function issuesOf(value: unknown): FieldIssue[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((issue): issue is { path?: unknown; message: unknown } => typeof issue === "object" && issue !== null && typeof (issue as { message?: unknown }).message === "string")
    .map((issue) => ({ path: typeof issue.path === "string" ? issue.path : "", message: issue.message as string }));
}

/** The typed error for a non-2xx response, from its status, headers and (possibly non-JSON) body. */
export function errorFromResponse(
  status: number,
  headers: Headers,
  body: unknown,
  rateLimit: RateLimitInfo | null,
  retryAfterSeconds: number | undefined,
): AtelierError {
  const parsed: ErrorBody = typeof body === "object" && body !== null ? (body as ErrorBody) : {};
  const fallback = typeof body === "string" && body.trim() ? body.trim().slice(0, 500) : `HTTP ${status} with no error body`;
  const message = typeof parsed.message === "string" ? parsed.message : fallback;
  const fields = {
    status,
    code: typeof parsed.code === "string" ? parsed.code : `HTTP_${status}`,
    requestId: typeof parsed.requestId === "string" ? parsed.requestId : headers.get("x-request-id"),
    issues: issuesOf(parsed.issues),
    headers,
    rateLimit,
  };
  switch (status) {
    case 401:
      return new AuthenticationError(message, fields);
    case 403:
      return new PermissionDeniedError(message, fields);
    case 404:
    case 410:
      return new NotFoundError(message, fields);
    case 409:
      return new ConflictError(message, fields);
    case 429:
      return new RateLimitError(message, { ...fields, retryAfter: retryAfterSeconds });
    case 503:
      return new ServiceUnavailableError(message, fields);
  }
  if (status >= 500) return new InternalServerError(message, fields);
  return new BadRequestError(message, fields);
}
