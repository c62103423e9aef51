/**
 * The one vocabulary of errors, and the one table that maps each to its HTTP status, tRPC code and
 * gRPC status. Every layer throws {@link AtelierError}; the edges (REST facade, tRPC, gRPC) only
 * translate through this table, so a code means the same thing to every caller.
 */
import { status as GrpcStatus } from "@grpc/grpc-js";

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

interface ErrorKind {
  http: number;
  trpc: TrpcCode;
  grpc: GrpcStatus;
}

export const ERROR_KINDS = {
  /** A field is missing, of the wrong type or out of range. */
  INVALID_INPUT: { http: 400, trpc: "BAD_REQUEST", grpc: GrpcStatus.INVALID_ARGUMENT },
  /** The body is not parseable JSON. */
  MALFORMED_JSON: { http: 400, trpc: "PARSE_ERROR", grpc: GrpcStatus.INVALID_ARGUMENT },
  /** `imageUrl` is not an accepted URL, or points at an address the policy refuses. */
  INVALID_IMAGE_URL: { http: 400, trpc: "BAD_REQUEST", grpc: GrpcStatus.INVALID_ARGUMENT },
  /** No key, or a key that is unknown or revoked. */
  UNAUTHORIZED: { http: 401, trpc: "UNAUTHORIZED", grpc: GrpcStatus.UNAUTHENTICATED },
  /** A genuine key past the expiry its owner gave it. */
  KEY_EXPIRED: { http: 401, trpc: "UNAUTHORIZED", grpc: GrpcStatus.UNAUTHENTICATED },
  /** The key is valid but its scopes do not include the operation called. */
  KEY_SCOPE_DENIED: { http: 403, trpc: "FORBIDDEN", grpc: GrpcStatus.PERMISSION_DENIED },
  NOT_FOUND: { http: 404, trpc: "NOT_FOUND", grpc: GrpcStatus.NOT_FOUND },
  METHOD_NOT_ALLOWED: { http: 405, trpc: "METHOD_NOT_SUPPORTED", grpc: GrpcStatus.UNIMPLEMENTED },
  /** The request body is over the configured size. */
  PAYLOAD_TOO_LARGE: { http: 413, trpc: "PAYLOAD_TOO_LARGE", grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  /** The source image is over the byte or pixel limit. */
  IMAGE_TOO_LARGE: { http: 413, trpc: "PAYLOAD_TOO_LARGE", grpc: GrpcStatus.OUT_OF_RANGE },
  /** The requested output would be over the configured pixel limit. */
  OUTPUT_TOO_LARGE: { http: 413, trpc: "PAYLOAD_TOO_LARGE", grpc: GrpcStatus.OUT_OF_RANGE },
  UNSUPPORTED_MEDIA_TYPE: {
    http: 415,
    trpc: "UNSUPPORTED_MEDIA_TYPE",
    grpc: GrpcStatus.INVALID_ARGUMENT,
  },
  /** The bytes are not an image that can be decoded. */
  IMAGE_UNDECODABLE: {
    http: 422,
    trpc: "UNPROCESSABLE_CONTENT",
    grpc: GrpcStatus.INVALID_ARGUMENT,
  },
  /** `Accept` names no media type this operation can answer with. */
  NOT_ACCEPTABLE: { http: 406, trpc: "BAD_REQUEST", grpc: GrpcStatus.INVALID_ARGUMENT },
  /** The job has already finished (cancel), or an `Idempotency-Key` request is still in flight. */
  JOB_CONFLICT: { http: 409, trpc: "CONFLICT", grpc: GrpcStatus.FAILED_PRECONDITION },
  /** An `Idempotency-Key` was reused with a different request. */
  IDEMPOTENCY_MISMATCH: { http: 422, trpc: "UNPROCESSABLE_CONTENT", grpc: GrpcStatus.INVALID_ARGUMENT },
  /** The job's result has been purged after its retention period, or the job produced none. */
  RESULT_GONE: { http: 410, trpc: "NOT_FOUND", grpc: GrpcStatus.NOT_FOUND },
  /** The key has as many queued and running jobs as it may; retry when some finish. */
  TOO_MANY_JOBS: { http: 429, trpc: "TOO_MANY_REQUESTS", grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  RATE_LIMITED: { http: 429, trpc: "TOO_MANY_REQUESTS", grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  /** The caller went away before the work finished. */
  CANCELLED: { http: 499, trpc: "CLIENT_CLOSED_REQUEST", grpc: GrpcStatus.CANCELLED },
  INTERNAL: { http: 500, trpc: "INTERNAL_SERVER_ERROR", grpc: GrpcStatus.INTERNAL },
  /** The source image could not be fetched (network error, non-2xx, timeout). */
  SOURCE_FETCH_FAILED: { http: 502, trpc: "BAD_GATEWAY", grpc: GrpcStatus.UNAVAILABLE },
  /** The operation needs model weights that are not installed here. */
  MODEL_NOT_INSTALLED: {
    http: 503,
    trpc: "SERVICE_UNAVAILABLE",
    grpc: GrpcStatus.FAILED_PRECONDITION,
  },
  /** Too much work queued already; retry later. */
  OVERLOADED: { http: 503, trpc: "SERVICE_UNAVAILABLE", grpc: GrpcStatus.UNAVAILABLE },
  /** A worker could not be reached. */
  WORKER_UNAVAILABLE: { http: 503, trpc: "SERVICE_UNAVAILABLE", grpc: GrpcStatus.UNAVAILABLE },
  /** A shared store (Redis quota counters, PostgreSQL API keys) cannot be reached; retry later. */
  STORE_UNAVAILABLE: { http: 503, trpc: "SERVICE_UNAVAILABLE", grpc: GrpcStatus.UNAVAILABLE },
  DEADLINE_EXCEEDED: { http: 504, trpc: "GATEWAY_TIMEOUT", grpc: GrpcStatus.DEADLINE_EXCEEDED },
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERROR_KINDS;

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
