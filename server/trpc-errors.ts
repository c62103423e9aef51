/**
 * Every failure a procedure produces becomes a TRPCError whose code matches the AtelierError it
 * carries as `cause`, so tRPC clients, the REST facade and logs all see the same code.
 */
import { TRPCError } from "@trpc/server";
import { AtelierError, asAtelierError, ERROR_KINDS, type FieldIssue } from "../core/errors.js";

interface ValidationIssue {
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>;
  message: string;
}

function isValidationFailure(error: TRPCError): error is TRPCError & { cause: Error & { issues: ValidationIssue[] } } {
  const cause = error.cause as { issues?: unknown } | undefined;
  return error.code === "BAD_REQUEST" && cause !== undefined && Array.isArray(cause.issues);
}

function issuePath(issue: ValidationIssue): string {
  return (issue.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment)).join(".");
}

/** "scale: Expected integer between 2 and 8 but received 9" and its siblings as one sentence. */
export function invalidInput(issues: FieldIssue[]): AtelierError {
  const [first] = issues;
  // Field messages usually name their field already ("... for scale but ..."); prefix only when not.
  const head = !first
    ? "The request body is invalid."
    : first.path && !first.message.includes(first.path)
      ? `${first.path}: ${first.message}`
      : first.message;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""}, listed in issues)` : "";
  return new AtelierError("INVALID_INPUT", `Invalid request: ${head}${more}`, { issues });
}

const CODE_FOR_FRAMEWORK_ERROR: Partial<Record<TRPCError["code"], AtelierError["code"]>> = {
  PARSE_ERROR: "MALFORMED_JSON",
  // tRPC's own refusals of a request's shape: a batch body that is not an object, mixed query and mutation calls.
  BAD_REQUEST: "INVALID_INPUT",
  NOT_FOUND: "NOT_FOUND",
  METHOD_NOT_SUPPORTED: "METHOD_NOT_ALLOWED",
  UNSUPPORTED_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  CLIENT_CLOSED_REQUEST: "CANCELLED",
};

/** The AtelierError behind any TRPCError: ours, a failed input validation, or a framework error. */
export function atelierErrorOf(error: TRPCError): AtelierError {
  if (error.cause instanceof AtelierError) return error.cause;
  if (isValidationFailure(error)) {
    return invalidInput(error.cause.issues.map((issue) => ({ path: issuePath(issue), message: issue.message })));
  }
  const code = CODE_FOR_FRAMEWORK_ERROR[error.code];
  if (code) return new AtelierError(code, error.message, { cause: error });
  return asAtelierError(error.cause ?? error);
}

export function toTRPCError(error: unknown): TRPCError {
  const failure = error instanceof TRPCError ? atelierErrorOf(error) : asAtelierError(error);
  return new TRPCError({ code: ERROR_KINDS[failure.code].trpc, message: failure.message, cause: failure });
}
