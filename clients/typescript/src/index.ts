/** The browser-safe entry point: the client, its errors and types. Node adds file access (node.ts). */
export { Atelier, DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, type AtelierOptions } from "./client.js";
export {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AtelierError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  type FieldIssue,
} from "./errors.js";
export type { FetchLike, RequestOptions, ResponseMeta } from "./http-client.js";
export { AtelierImage, type ImageData } from "./image-output.js";
export { bytesToDataURL, toImageUrl, type ImageInput } from "./image-input.js";
export type { JobData, JobEvent, JobList, JobProgress, JobStatus, ListJobsParams, WebhookSecret } from "./jobs-types.js";
export { OPERATIONS, type ClientMethodName, type JobOperation } from "./operations.js";
export type { RateLimitInfo } from "./rate-limit.js";
export { Job, Jobs, Webhooks, type WaitOptions } from "./resources/jobs.js";
export type * from "./types.js";
export { VERSION } from "./version.js";
export { Atelier as default } from "./client.js";
