/**
 * The job resource, taken from the generated OpenAPI types (as types.ts does for the operations), so
 * a change to the served document's jobs schemas changes these at regeneration.
 */
import type { components, paths } from "./generated/openapi.js";

type Schemas = components["schemas"];

export type JobData = Schemas["Job"];
export type JobStatus = JobData["status"];
export type JobProgress = JobData["progress"];
export type JobError = NonNullable<JobData["error"]>;
export type JobList = Schemas["JobList"];
export type WebhookSecret = Schemas["WebhookSecret"];
export type ListJobsParams = NonNullable<paths["/api/v1/jobs"]["get"]["parameters"]["query"]>;

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ["succeeded", "failed", "canceled"];

/** One event of `GET /jobs/{id}/events`; `data` parsed from JSON where it is JSON. */
export interface JobEvent {
  id: string | undefined;
  /** `progress`, `status`, `result`, `error` ... as the server names them. */
  event: string;
  data: unknown;
}
