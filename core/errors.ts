/**
 * The one vocabulary of errors, and the one table that maps each to its HTTP status, tRPC code and
 * gRPC status. Every layer throws {@link AtelierError}; the edges (REST facade, tRPC, gRPC) only
 * translate through this table, so a code means the same thing to every caller.
 */
import { status as GrpcStatus } from "@grpc/grpc-js";
import { defaultOf } from "./config.js";

type TrpcCode =
  | "BAD_REQUEST"
  | "PARSE_ERROR"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_SUPPORTED"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "UNPROCESSABLE_CONTENT"
  | "CONFLICT"
  | "TOO_MANY_REQUESTS"
  | "CLIENT_CLOSED_REQUEST"
  | "INTERNAL_SERVER_ERROR"
  | "BAD_GATEWAY"
  | "SERVICE_UNAVAILABLE"
  | "GATEWAY_TIMEOUT";

/**
 * Which operations can answer with a kind, so the OpenAPI document lists each kind exactly on the
 * operations that can return it: `path` every documented path (health endpoints included); `any`
 * every API operation; `body` operations that take a JSON body;
 * `key` operations that need an API key; `image-input` operations that read an image from a URL;
 * `image-output` operations that return images; `model` operations that take a model id or an image. `routing`
 * answers no operation (an unknown path); `unseen` never reaches a client (it hung up); `work`
 * operations that queue work on a worker; `jobs` the jobs API and the job headers of POST operations
 * (`Prefer`, `Idempotency-Key`, `Accept: image/*`), documented by jobs/openapi-jobs.ts.
 */
export type ErrorScope = "path" | "any" | "body" | "key" | "image-input" | "image-output" | "model" | "work" | "routing" | "unseen" | "jobs";

export interface ErrorKind {
  http: number;
  trpc: TrpcCode;
  grpc: GrpcStatus;
  scope: ErrorScope;
  /** What the code means, for the API's reference. */
  description: string;
  /** A message as a client would see it, for the API's reference. */
  example: string;
  /** Headers a response of this kind carries besides `X-Request-Id`. */
  headers?: readonly ErrorHeader[];
}

export type ErrorHeader = "Retry-After" | "WWW-Authenticate" | "Allow" | "RateLimit";

/** One entry per code. A new kind is one entry here: the document, REST, tRPC and gRPC follow. */
const KINDS = {
  INVALID_INPUT: {
    http: 400, trpc: "BAD_REQUEST", grpc: GrpcStatus.INVALID_ARGUMENT, scope: "body",
    description: "A field is missing, of the wrong type or out of range; `issues` lists each bad field.",
    example: "Invalid request: Expected integer between 2 and 8 for scale but received 9",
  },
  MALFORMED_JSON: {
    http: 400, trpc: "PARSE_ERROR", grpc: GrpcStatus.INVALID_ARGUMENT, scope: "body",
    description: "The body is not parseable JSON.",
    example: "The request body is not valid JSON.",
  },
  MALFORMED_MULTIPART: {
    http: 400, trpc: "PARSE_ERROR", grpc: GrpcStatus.INVALID_ARGUMENT, scope: "image-input",
    description: "A `multipart/form-data` body that cannot be read as a form (no boundary, a cut-off or malformed part), or a part the operation does not take or takes once; the message names the parts it takes.",
    example: "Unexpected file part \"photo\". This operation takes the file part image and the fields scale, model, quality, outputFormat, webhookUrl.",
  },
  INVALID_IMAGE_URL: {
    http: 400, trpc: "BAD_REQUEST", grpc: GrpcStatus.INVALID_ARGUMENT, scope: "image-input",
    description: "`imageUrl` is not an accepted URL, or points at an address the server refuses to fetch.",
    example: "Expected an http(s):// or data:image/...;base64, URL for imageUrl.",
  },
  UNAUTHORIZED: {
    http: 401, trpc: "UNAUTHORIZED", grpc: GrpcStatus.UNAUTHENTICATED, scope: "key",
    description: "No API key, or a key that is unknown or revoked.",
    example: "Missing API key: send `Authorization: Bearer <key>`.",
    headers: ["WWW-Authenticate"],
  },
  KEY_EXPIRED: {
    http: 401, trpc: "UNAUTHORIZED", grpc: GrpcStatus.UNAUTHENTICATED, scope: "key",
    description: "A genuine key past the expiry its owner gave it; create a new key in the console.",
    example: "The API key expired at 2026-01-01T00:00:00.000Z. Create a new key in the console's API keys area.",
    headers: ["WWW-Authenticate"],
  },
  KEY_SCOPE_DENIED: {
    http: 403, trpc: "FORBIDDEN", grpc: GrpcStatus.PERMISSION_DENIED, scope: "key",
    description: "The key is valid but its scopes do not include the operation called.",
    example: "This API key may not call Upscale (POST /api/v1/tools/upscale); its scopes are prompt.improve. Use a key with that scope, or one without scopes.",
    headers: ["WWW-Authenticate"],
  },
  NOT_FOUND: {
    http: 404, trpc: "NOT_FOUND", grpc: GrpcStatus.NOT_FOUND, scope: "routing",
    description: "No endpoint at this path.",
    example: "No endpoint at /api/v1/nothing. See /api/v1/openapi.json for the API.",
  },
  METHOD_NOT_ALLOWED: {
    http: 405, trpc: "METHOD_NOT_SUPPORTED", grpc: GrpcStatus.UNIMPLEMENTED, scope: "path",
    description: "This path does not take that method; `Allow` lists the ones it takes.",
    example: "DELETE is not allowed on /api/v1/tools/upscale; use POST.",
    headers: ["Allow"],
  },
  PAYLOAD_TOO_LARGE: {
    http: 413, trpc: "PAYLOAD_TOO_LARGE", grpc: GrpcStatus.RESOURCE_EXHAUSTED, scope: "body",
    description: "The request body is over the server's limit (ATELIER_MAX_BODY_BYTES).",
    example: "The request body is over this server's limit of 36700160 bytes (ATELIER_MAX_BODY_BYTES).",
  },
  IMAGE_TOO_LARGE: {
    http: 413, trpc: "PAYLOAD_TOO_LARGE", grpc: GrpcStatus.OUT_OF_RANGE, scope: "image-input",
    description: "The source image is over the byte or pixel limit (ATELIER_MAX_IMAGE_BYTES, ATELIER_MAX_INPUT_PIXELS).",
    example: "The source image exceeds this server's pixel limit (ATELIER_MAX_INPUT_PIXELS).",
  },
  OUTPUT_TOO_LARGE: {
    http: 413, trpc: "PAYLOAD_TOO_LARGE", grpc: GrpcStatus.OUT_OF_RANGE, scope: "image-output",
    description: "The result would be over the output pixel limit (ATELIER_MAX_OUTPUT_PIXELS).",
    example: `The result would be 4000x4000 (16.0 MP), over this server's limit of ${defaultOf("ATELIER_MAX_OUTPUT_PIXELS")}. Use a smaller scale.`,
  },
  UNSUPPORTED_MEDIA_TYPE: {
    http: 415, trpc: "UNSUPPORTED_MEDIA_TYPE", grpc: GrpcStatus.INVALID_ARGUMENT, scope: "body",
    description: "The body is not sent as `application/json` (or, for an operation that takes an image, as `multipart/form-data`).",
    example: "Send the request body as JSON with `Content-Type: application/json` (received text/plain).",
  },
  IMAGE_UNDECODABLE: {
    http: 422, trpc: "UNPROCESSABLE_CONTENT", grpc: GrpcStatus.INVALID_ARGUMENT, scope: "image-input",
    description: "The source bytes are not an image that can be decoded.",
    example: "The source is not an image in a supported format (JPEG, PNG, WebP, GIF, AVIF, TIFF, SVG).",
  },
  RATE_LIMITED: {
    http: 429, trpc: "TOO_MANY_REQUESTS", grpc: GrpcStatus.RESOURCE_EXHAUSTED, scope: "key",
    description: "The key's hourly quota is spent; `Retry-After` says when it refills.",
    example: `Rate limit exceeded: this key allows ${defaultOf("ATELIER_RATE_LIMIT_PER_HOUR")} requests per hour. Retry after 1200 seconds.`,
    headers: ["Retry-After", "RateLimit"],
  },
  CANCELLED: {
    http: 499, trpc: "CLIENT_CLOSED_REQUEST", grpc: GrpcStatus.CANCELLED, scope: "unseen",
    description: "The caller went away before the work finished.",
    example: "The client closed the connection.",
  },
  INTERNAL: {
    http: 500, trpc: "INTERNAL_SERVER_ERROR", grpc: GrpcStatus.INTERNAL, scope: "any",
    description: "An internal failure (including failing to encode a result); the detail is in the server's log under `requestId`.",
    example: "The server failed to process the request. Try again later.",
  },
  SOURCE_FETCH_FAILED: {
    http: 502, trpc: "BAD_GATEWAY", grpc: GrpcStatus.UNAVAILABLE, scope: "image-input",
    description: "The source image could not be fetched (network error, non-2xx answer, timeout).",
    example: "Fetching imageUrl failed: the server answered 404.",
  },
  NOT_ACCEPTABLE: {
    http: 406, trpc: "BAD_REQUEST", grpc: GrpcStatus.INVALID_ARGUMENT, scope: "jobs",
    description: "`Accept` asks for an image encoding other than the body's `outputFormat`, or for nothing the operation can answer.",
    example: "outputFormat png is answered as image/png or JSON, which Accept does not allow; drop outputFormat or accept image/png.",
  },
  JOB_CONFLICT: {
    http: 409, trpc: "CONFLICT", grpc: GrpcStatus.FAILED_PRECONDITION, scope: "jobs",
    description: "The job has already finished (cancel) or not succeeded (result), or a request with the same `Idempotency-Key` is still running.",
    example: "Job job_3q2xv0aAT8m1b7KpZk9dWw has already finished (succeeded); there is nothing to cancel.",
    headers: ["Retry-After"],
  },
  RESULT_GONE: {
    http: 410, trpc: "NOT_FOUND", grpc: GrpcStatus.NOT_FOUND, scope: "jobs",
    description: "The job's result was deleted after the retention period (ATELIER_JOB_RESULT_RETENTION_HOURS).",
    example: "The result of job job_3q2xv0aAT8m1b7KpZk9dWw was deleted after the retention period (ATELIER_JOB_RESULT_RETENTION_HOURS).",
  },
  IDEMPOTENCY_MISMATCH: {
    http: 422, trpc: "UNPROCESSABLE_CONTENT", grpc: GrpcStatus.INVALID_ARGUMENT, scope: "jobs",
    description: "An `Idempotency-Key` was reused within 24 hours with a different request.",
    example: "Idempotency-Key \"order-42\" was already used with a different request in the last 24 hours; use a new key for a new request.",
  },
  TOO_MANY_JOBS: {
    http: 429, trpc: "TOO_MANY_REQUESTS", grpc: GrpcStatus.RESOURCE_EXHAUSTED, scope: "jobs",
    description: "The key has as many queued and running jobs as it may (ATELIER_JOB_MAX_ACTIVE_PER_KEY); retry when some have finished.",
    example: `This key already has ${defaultOf("ATELIER_JOB_MAX_ACTIVE_PER_KEY")} queued or running jobs (ATELIER_JOB_MAX_ACTIVE_PER_KEY). Retry when some have finished.`,
    headers: ["Retry-After"],
  },
  TOO_MANY_STREAMS: {
    http: 429, trpc: "TOO_MANY_REQUESTS", grpc: GrpcStatus.RESOURCE_EXHAUSTED, scope: "jobs",
    description: "The key has as many job event streams open, or result downloads in progress, on this server as it may (ATELIER_JOB_MAX_EVENT_STREAMS_PER_KEY, ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY); retry when one has closed.",
    example: `This key already has ${defaultOf("ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY")} job result downloads in progress (ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY). Retry when one has finished.`,
    headers: ["Retry-After"],
  },
  MODEL_NOT_INSTALLED: {
    http: 503, trpc: "SERVICE_UNAVAILABLE", grpc: GrpcStatus.FAILED_PRECONDITION, scope: "model",
    description: "The operation needs model weights that are not installed (or are disabled) here; the message names the install command.",
    example: "The model \"esrgan-thick\" is not installed on this server. An operator installs it with `npm run models -- pull esrgan-thick`.",
    headers: ["Retry-After"],
  },
  OVERLOADED: {
    http: 503, trpc: "SERVICE_UNAVAILABLE", grpc: GrpcStatus.UNAVAILABLE, scope: "work",
    description: "Too much work is queued already; retry after `Retry-After`.",
    example: "The server is busy. Try again in a few seconds.",
    headers: ["Retry-After"],
  },
  WORKER_UNAVAILABLE: {
    http: 503, trpc: "SERVICE_UNAVAILABLE", grpc: GrpcStatus.UNAVAILABLE, scope: "any",
    description: "An inference worker could not be reached; retry after `Retry-After`.",
    example: "The inference worker is unreachable. Try again shortly.",
    headers: ["Retry-After"],
  },
  STORE_UNAVAILABLE: {
    http: 503, trpc: "SERVICE_UNAVAILABLE", grpc: GrpcStatus.UNAVAILABLE, scope: "key",
    description: "A shared store (Redis quota counters, PostgreSQL API keys) cannot be reached; retry after `Retry-After`.",
    example: "The API key store is unreachable. Try again shortly.",
    headers: ["Retry-After"],
  },
  DEADLINE_EXCEEDED: {
    http: 504, trpc: "GATEWAY_TIMEOUT", grpc: GrpcStatus.DEADLINE_EXCEEDED, scope: "any",
    description: "The operation did not finish within the server's deadline.",
    example: "The operation did not finish within the server's deadline. Try a smaller image.",
  },
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof KINDS;

export const ERROR_KINDS: Readonly<Record<ErrorCode, ErrorKind>> = KINDS;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_KINDS, value);
}

/** One problem with one input field. `path` is dotted (`data.0.url`); empty for the whole body. */
export interface FieldIssue {
  path: string;
  message: string;
}

export interface AtelierErrorOptions {
  issues?: FieldIssue[];
  /** Seconds after which a retry may succeed (429, 503); sent as `Retry-After`. */
  retryAfterSeconds?: number;
  /** Internal detail for logs; never sent to clients. */
  cause?: unknown;
}

/**
 * A failure with a public message (what is wrong and how to fix it) that is safe to show to any
 * client. Internal detail travels only in `cause`, for logs.
 */
export class AtelierError extends Error {
  readonly issues: FieldIssue[] | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AtelierErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AtelierError";
    this.issues = options.issues;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get httpStatus(): number {
    return ERROR_KINDS[this.code].http;
  }
}

/** The JSON body every failing REST response carries. */
export interface PublicError {
  code: ErrorCode;
  message: string;
  requestId: string;
  issues?: FieldIssue[];
}

export function toPublicError(error: AtelierError, requestId: string): PublicError {
  return {
    code: error.code,
    message: error.message,
    requestId,
    ...(error.issues && error.issues.length > 0 ? { issues: error.issues } : {}),
  };
}

/** Anything thrown that is not an AtelierError is an internal fault: its detail stays in logs. */
export function asAtelierError(error: unknown): AtelierError {
  if (error instanceof AtelierError) return error;
  return new AtelierError("INTERNAL", "The server failed to process the request. Try again later.", {
    cause: error,
  });
}

/** A model as a MODEL_NOT_INSTALLED names it: from a catalog entry (workers) or a model record (router). */
export interface InstallableModel {
  id: string;
  /** The operator's command, e.g. `npm run models -- pull esrgan-thick`; none for built-in models. */
  installCommand: string | undefined;
  /** Told after the id, e.g. `people only`. */
  note?: string;
}

export interface ModelNotInstalledOptions {
  /** Models that would fix it, each told as `` `command` (id, note) ``. */
  install?: readonly InstallableModel[];
  /** The words before the list; default "An operator installs it with". */
  lead?: string;
  issues?: FieldIssue[];
  cause?: unknown;
  /** When the model is expected sooner than an operator's install (first-start provisioning). */
  retryAfterSeconds?: number;
}

/** Until an operator installs a model nothing changes, so clients are told to come back in an hour. */
const MODEL_RETRY_SECONDS = 3600;

/**
 * The one constructor of MODEL_NOT_INSTALLED: `problem` says what is missing or unusable, then each
 * model that would fix it is named with the command that installs it.
 */
export function modelNotInstalled(problem: string, options: ModelNotInstalledOptions = {}): AtelierError {
  const install = (options.install ?? []).filter((model) => model.installCommand);
  // A lone model needs no label unless it has a note: the problem already names it.
  const label = (model: InstallableModel) => (install.length > 1 || model.note ? ` (${[model.id, model.note].filter(Boolean).join(", ")})` : "");
  const list = install.map((model) => `\`${model.installCommand}\`${label(model)}`).join(", or ");
  const remedy = install.length > 0 ? ` ${options.lead ?? "An operator installs it with"} ${list}.` : "";
  return new AtelierError("MODEL_NOT_INSTALLED", `${problem}${remedy}`, {
    retryAfterSeconds: options.retryAfterSeconds ?? MODEL_RETRY_SECONDS,
    ...(options.issues ? { issues: options.issues } : {}),
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}
