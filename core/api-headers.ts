/**
 * The API's own HTTP headers: those a client may send beyond what a browser sends by itself, and
 * those it may read in an answer. The one list: the OpenAPI document takes the description of every
 * header it names from here (`Authorization` it states as its security scheme, `Content-Type` with
 * each request body), and CORS (operations/cors.ts) lets a listed origin's pages send and read
 * exactly these, so every header the API documents works from a browser too.
 */
import { LIMITS } from "./limits.js";

export interface ApiHeader {
  /** What it means, for the API's reference. */
  description: string;
  schema: { type: "string" | "integer"; maxLength?: number };
  example: string | number;
}

const IDEMPOTENCY_KEY = LIMITS.idempotencyKeyCharacters;

/** Headers a client sends. */
export const API_REQUEST_HEADERS = {
  Authorization: { description: "`Bearer <API key>`.", schema: { type: "string" }, example: "Bearer atl_<id>_<secret>" },
  "Content-Type": { description: "`application/json` for every body.", schema: { type: "string" }, example: "application/json" },
  Prefer: {
    description:
      "RFC 7240. `respond-async`: answer 202 with the job at once. `wait=N`: wait up to N seconds (capped by ATELIER_JOB_MAX_WAIT_SECONDS) " +
      "and answer 200 with the normal body when done, else 202 with the job. Without Prefer the call is synchronous, as always.",
    schema: { type: "string" },
    example: "respond-async",
  },
  "Idempotency-Key": {
    description:
      `IETF httpapi draft: ${IDEMPOTENCY_KEY.min} to ${IDEMPOTENCY_KEY.max} visible ASCII characters, scoped` +
      " to the API key for 24 hours. The same key and body give the same " +
      "response (or the same job) without charging the quota again; a different body is 422 (`IDEMPOTENCY_MISMATCH`); a synchronous " +
      "retry while the first is still running is 409 (`JOB_CONFLICT`).",
    schema: { type: "string", maxLength: IDEMPOTENCY_KEY.max },
    example: "5f0c6e1e-3c1a-4b59-9a43-0c6f7a4a8e21",
  },
  "Last-Event-ID": { description: "Resume after this event id.", schema: { type: "string" }, example: "3" },
  "X-Request-Id": { description: "An id of the caller's own for this request (8 to 128 of `A-Z a-z 0-9 . _ : -`); the answer keeps it.", schema: { type: "string" }, example: "req_3f9c2d7e" },
  traceparent: { description: "W3C trace context: the request continues this trace in the logs and on the workers.", schema: { type: "string" }, example: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
  tracestate: { description: "W3C trace context vendor state, sent with `traceparent` by tracing libraries; accepted and not used.", schema: { type: "string" }, example: "vendor=value" },
} as const satisfies Record<string, ApiHeader>;

/** Headers an answer carries (raw image answers add their `X-Atelier-*` fields, jobs/raw-image.ts). */
export const API_RESPONSE_HEADERS = {
  "X-Request-Id": { description: "Id of this request, also in the body; quote it when reporting a problem.", schema: { type: "string" }, example: "req_3f9c2d7e" },
  "RateLimit-Policy": { description: "Quota policy (IETF draft) of the tighter budget: `hourly` (the key's own limit) or `user-hourly` (the allowance all keys of the key's owner share), requests `q` per window `w` seconds.", schema: { type: "string" }, example: '"hourly";q=100;w=3600' },
  RateLimit: { description: "Quota state (IETF draft): requests remaining `r`, seconds to reset `t`.", schema: { type: "string" }, example: '"hourly";r=99;t=3540' },
  "X-RateLimit-Limit": { description: "Requests allowed per window: the key's own limit, or its owner's allowance when that is tighter.", schema: { type: "integer" }, example: 100 },
  "X-RateLimit-Remaining": { description: "Requests left in the current window.", schema: { type: "integer" }, example: 99 },
  "X-RateLimit-Reset": { description: "Unix time (seconds) when the window resets.", schema: { type: "integer" }, example: 1795259753 },
  "Retry-After": { description: "Seconds after which a retry may succeed.", schema: { type: "integer" }, example: 3600 },
  "WWW-Authenticate": { description: "The scheme to authenticate with.", schema: { type: "string" }, example: 'Bearer realm="atelier"' },
  Allow: { description: "The methods this path takes.", schema: { type: "string" }, example: "POST" },
  Location: { description: "The job: `/api/v1/jobs/{id}`.", schema: { type: "string" }, example: "/api/v1/jobs/job_3q2xv0aAT8m1b7KpZk9dWw" },
  "Preference-Applied": { description: "The preferences honoured, e.g. `respond-async` or `wait=10`.", schema: { type: "string" }, example: "respond-async" },
  "Idempotent-Replayed": { description: "`true` when this is the answer to an earlier request with the same `Idempotency-Key`.", schema: { type: "string" }, example: "true" },
  traceresponse: { description: "W3C trace context of this request: its trace id is the one to quote.", schema: { type: "string" }, example: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
} as const satisfies Record<string, ApiHeader>;

export type ApiRequestHeader = keyof typeof API_REQUEST_HEADERS;
export type ApiResponseHeader = keyof typeof API_RESPONSE_HEADERS;

/** Headers every answer carries: the request id, and the trace id to quote (observability/request-observer.ts). */
export const EVERY_ANSWER_HEADERS: readonly ApiResponseHeader[] = ["X-Request-Id", "traceresponse"];
