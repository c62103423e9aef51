/**
 * AtelierError <-> gRPC status, through the one table in errors.ts. The service's own code rides
 * in trailing metadata (`atelier-error-code`) because several codes share a gRPC status (a 413
 * and a 422 are both "bad argument" to gRPC) and clients of any language can read it.
 */
import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from "@grpc/grpc-js";
import { AtelierError, ERROR_KINDS, isErrorCode, type ErrorCode, type FieldIssue } from "../core/errors.js";

export const ERROR_CODE_METADATA_KEY = "atelier-error-code";
export const RETRY_AFTER_METADATA_KEY = "atelier-retry-after";
/** Field issues of an INVALID_INPUT error, as UTF-8 JSON (a `-bin` key: messages may hold any text). */
export const ISSUES_METADATA_KEY = "atelier-error-issues-bin";

/** What a gRPC handler sends back for a failure. */
export function toGrpcStatus(error: AtelierError): Partial<StatusObject> {
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_METADATA_KEY, error.code);
  if (error.retryAfterSeconds !== undefined) {
    metadata.set(RETRY_AFTER_METADATA_KEY, String(error.retryAfterSeconds));
  }
  if (error.issues && error.issues.length > 0) {
    metadata.set(ISSUES_METADATA_KEY, Buffer.from(JSON.stringify(error.issues), "utf8"));
  }
  return { code: ERROR_KINDS[error.code].grpc, details: error.message, metadata };
}

/** Without our metadata (a proxy, a crash, a transport fault) the status alone decides. */
const CODE_FOR_BARE_STATUS: Partial<Record<GrpcStatus, ErrorCode>> = {
  [GrpcStatus.INVALID_ARGUMENT]: "INVALID_INPUT",
  [GrpcStatus.OUT_OF_RANGE]: "IMAGE_TOO_LARGE",
  [GrpcStatus.RESOURCE_EXHAUSTED]: "PAYLOAD_TOO_LARGE",
  [GrpcStatus.FAILED_PRECONDITION]: "MODEL_NOT_INSTALLED",
  [GrpcStatus.UNAVAILABLE]: "WORKER_UNAVAILABLE",
  [GrpcStatus.DEADLINE_EXCEEDED]: "DEADLINE_EXCEEDED",
  [GrpcStatus.CANCELLED]: "CANCELLED",
};

const PUBLIC_MESSAGE_FOR_BARE_STATUS: Partial<Record<ErrorCode, string>> = {
  PAYLOAD_TOO_LARGE: "The image is larger than the worker accepts (ATELIER_GRPC_MAX_MESSAGE_BYTES).",
  WORKER_UNAVAILABLE: "The inference worker is unreachable. Try again shortly.",
  DEADLINE_EXCEEDED: "The operation did not finish within the server's deadline. Try a smaller image.",
  CANCELLED: "The request was cancelled.",
};

/** Rebuilds the AtelierError a worker sent, or classifies a transport failure. */
export function fromGrpcError(error: ServiceError): AtelierError {
  const sent = error.metadata?.get(ERROR_CODE_METADATA_KEY)[0];
  if (isErrorCode(sent)) {
    const retry = Number(error.metadata.get(RETRY_AFTER_METADATA_KEY)[0]);
    const issues = issuesFrom(error.metadata.get(ISSUES_METADATA_KEY)[0]);
    return new AtelierError(sent, error.details, {
      ...(Number.isFinite(retry) && retry > 0 ? { retryAfterSeconds: retry } : {}),
      ...(issues ? { issues } : {}),
      cause: error,
    });
  }
  return workerCallError(CODE_FOR_BARE_STATUS[error.code as GrpcStatus] ?? "INTERNAL", error);
}

/**
 * A worker call that ended without the worker's own error (a transport fault, a deadline, a
 * cancellation, a worker going away): the public message and Retry-After for `code`.
 */
export function workerCallError(code: ErrorCode, cause?: unknown): AtelierError {
  const message = PUBLIC_MESSAGE_FOR_BARE_STATUS[code] ?? "The inference worker failed to process the request.";
  return new AtelierError(code, message, {
    ...(code === "WORKER_UNAVAILABLE" ? { retryAfterSeconds: 5 } : {}),
    cause,
  });
}

function issuesFrom(value: unknown): FieldIssue[] | undefined {
  if (!Buffer.isBuffer(value)) return undefined;
  try {
    const parsed: unknown = JSON.parse(value.toString("utf8"));
    if (!Array.isArray(parsed)) return undefined;
    return parsed.filter(
      (issue): issue is FieldIssue => typeof issue === "object" && issue !== null && typeof issue.path === "string" && typeof issue.message === "string",
    );
  } catch {
    return undefined;
  }
}
