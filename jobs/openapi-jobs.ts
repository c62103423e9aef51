/**
 * What the jobs feature adds to the OpenAPI document: on every POST operation the `Prefer` and
 * `Idempotency-Key` headers, the 202 answer with the job, raw image answers for `Accept: image/*`,
 * the optional `webhookUrl` with its callback; and the jobs and webhook-secret paths.
 */
import { z } from "zod";
import type { OpenAPIObject } from "trpc-to-openapi";
import { JOB_OPERATIONS } from "./job-operations.js";
import { JOB_STATUSES } from "./job-record.js";
import { jobComponentSchemas } from "./job-schemas.js";

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorContent = { "application/json": { schema: ref("Error") } };
const header = (description: string, type: "string" | "integer" = "string") => ({ description, schema: { type } });
const REQUEST_ID = { "X-Request-Id": header("Id of this request.") };

const errors = (statuses: Record<string, string>) =>
  Object.fromEntries(Object.entries(statuses).map(([status, description]) => [status, { description, headers: REQUEST_ID, content: errorContent }]));

const COMMON_ERRORS = { "401": "Missing or invalid API key (`UNAUTHORIZED`).", "500": "Internal failure." };
const JOB_ERRORS = { ...COMMON_ERRORS, "404": "No such job for this API key (`NOT_FOUND`); another key's jobs are never shown." };

const jobIdParameter = { name: "id", in: "path", required: true, description: "The job's id.", schema: { type: "string" }, example: "job_3q2xv0aAT8m1b7KpZk9dWw" };

const JOB_POST_PARAMETERS = [
  {
    name: "Prefer",
    in: "header",
    required: false,
    description:
      "RFC 7240. `respond-async`: answer 202 with the job at once. `wait=N`: wait up to N seconds (capped by ATELIER_JOB_MAX_WAIT_SECONDS) " +
      "and answer 200 with the normal body when done, else 202 with the job. Without Prefer the call is synchronous, as always.",
    schema: { type: "string" },
    example: "respond-async",
  },
  {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "IETF httpapi draft: 1 to 255 visible ASCII characters, scoped to the API key for 24 hours. The same key and body give the same " +
      "response (or the same job) without charging the quota again; a different body is 422 (`IDEMPOTENCY_MISMATCH`); a synchronous " +
      "retry while the first is still running is 409 (`JOB_CONFLICT`).",
    schema: { type: "string", maxLength: 255 },
    example: "5f0c6e1e-3c1a-4b59-9a43-0c6f7a4a8e21",
  },
];

const jobAccepted = {
  description: "Accepted as a job (`Prefer: respond-async`, an unfinished `wait`, or a `webhookUrl`). Follow `Location`.",
  headers: {
    ...REQUEST_ID,
    Location: header("The job: `/api/v1/jobs/{id}`."),
    "Preference-Applied": header("The preferences honoured, e.g. `respond-async` or `wait=10`."),
  },
  content: { "application/json": { schema: ref("Job") } },
};

const rawImageContent = Object.fromEntries(
  ["image/png", "image/jpeg", "image/webp"].map((type) => [type, { schema: { type: "string", format: "binary" } }]),
);

const webhookCallback = {
  jobFinished: {
    "{$request.body#/webhookUrl}": {
      post: {
        summary: "The job has finished",
        description:
          "POSTed once the job has finished, signed per Standard Webhooks with the key's secret (`GET /api/v1/webhooks/secret`); " +
          "retried with exponential backoff for a day until a 2xx answer. Private addresses are refused unless allow-listed.",
        parameters: [
          { name: "webhook-id", in: "header", required: true, schema: { type: "string" }, description: "`msg_<job id>`; the same on every retry." },
          { name: "webhook-timestamp", in: "header", required: true, schema: { type: "string" }, description: "Unix time in seconds of this attempt." },
          { name: "webhook-signature", in: "header", required: true, schema: { type: "string" }, description: "`v1,<base64 HMAC-SHA256>`." },
        ],
        requestBody: { required: true, content: { "application/json": { schema: ref("WebhookEvent") } } },
        responses: { "200": { description: "Any 2xx acknowledges the delivery; anything else is retried." } },
      },
    },
  },
};

const WEBHOOK_URL_PROPERTY = {
  type: "string",
  format: "uri",
  maxLength: 2048,
  description: "Beyond the spec: an http(s) URL to POST the finished job to (see the callback). Makes the request a job (202) unless `Prefer: wait` is sent.",
};

function decorateJobOperation(operation: Json): void {
  operation.parameters = [...((operation.parameters as unknown[]) ?? []), ...JOB_POST_PARAMETERS];
  const responses = (operation.responses ??= {}) as Record<string, Json>;
  const ok = responses["200"];
  const schema = ((operation.requestBody as Json | undefined)?.content as Record<string, { schema?: Json }> | undefined)?.["application/json"]?.schema;
  if (schema?.properties) (schema.properties as Json).webhookUrl = WEBHOOK_URL_PROPERTY;
  const images = ((ok?.content as Json | undefined)?.["application/json"] as { schema?: { properties?: Json } } | undefined)?.schema?.properties?.data !== undefined;
  if (ok && images) {
    ok.description =
      `${String(ok.description ?? "Successful response")}. With \`Accept: image/png\`, \`image/jpeg\` or \`image/webp\` the body is the image's bytes ` +
      "and the other fields travel in `X-Atelier-*` headers (`X-Atelier-Width`, `X-Atelier-Height`, `X-Atelier-Model`, ...).";
    ok.content = { ...(ok.content as Json), ...rawImageContent };
  }
  responses["202"] = jobAccepted;
  Object.assign(
    responses,
    errors({
      "409": "An `Idempotency-Key` request is still running (`JOB_CONFLICT`); carries `Retry-After`.",
      "422": "An `Idempotency-Key` reused with a different body (`IDEMPOTENCY_MISMATCH`), or an undecodable image.",
      ...(images ? { "406": "`Accept` asks for an image encoding other than `outputFormat` (`NOT_ACCEPTABLE`)." } : {}),
    }),
  );
  operation.callbacks = webhookCallback;
}

const json = (schema: Json, description: string) => ({ description, headers: REQUEST_ID, content: { "application/json": { schema } } });
const secured = { security: [{ bearerAuth: [] }], tags: ["jobs"] };

const JOBS_PATHS: Record<string, Json> = {
  "/v1/jobs": {
    get: {
      ...secured,
      operationId: "jobs-list",
      summary: "List your jobs",
      description: "The calling key's jobs, newest first, a page at a time.",
      parameters: [
        { name: "status", in: "query", required: false, schema: { type: "string", enum: JOB_STATUSES }, description: "Only jobs in this status." },
        { name: "cursor", in: "query", required: false, schema: { type: "string" }, description: "`nextCursor` of the previous page." },
        { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 100, default: 20 }, description: "Jobs per page, 1 to 100." },
      ],
      responses: { "200": json(ref("JobList"), "One page of jobs."), ...errors({ ...COMMON_ERRORS, "400": "A bad query parameter (`INVALID_INPUT`)." }) },
    },
  },
  "/v1/jobs/{id}": {
    get: {
      ...secured,
      operationId: "jobs-get",
      summary: "Get a job",
      description: "Status, progress, queue position, and once finished the result (exactly the synchronous body) or the error.",
      parameters: [jobIdParameter],
      responses: { "200": json(ref("Job"), "The job."), ...errors(JOB_ERRORS) },
    },
    delete: {
      ...secured,
      operationId: "jobs-cancel",
      summary: "Cancel a job",
      description: "Cancels a queued or running job; a running one stops on the worker within one step. Answers the canceled job.",
      parameters: [jobIdParameter],
      responses: { "200": json(ref("Job"), "The canceled job."), ...errors({ ...JOB_ERRORS, "409": "The job has already finished (`JOB_CONFLICT`)." }) },
    },
  },
  "/v1/jobs/{id}/result": {
    get: {
      ...secured,
      operationId: "jobs-result",
      summary: "Get a job's result",
      description: "An image operation's image as raw bytes (its metadata in `X-Atelier-*` headers); other operations' JSON body.",
      parameters: [jobIdParameter],
      responses: {
        "200": { description: "The result.", headers: REQUEST_ID, content: { ...rawImageContent, "application/json": { schema: { type: "object" } } } },
        ...errors({
          ...JOB_ERRORS,
          "409": "The job has not succeeded (yet) (`JOB_CONFLICT`).",
          "410": "The result was deleted after the retention period (`RESULT_GONE`).",
        }),
      },
    },
  },
  "/v1/jobs/{id}/events": {
    get: {
      ...secured,
      operationId: "jobs-events",
      summary: "Follow a job (Server-Sent Events)",
      description:
        "`status` events (`queued`, `running`, then the final status), `progress` events (`{fraction, step, steps, stage}`), then `result` " +
        "(the synchronous body) or `error` (the error body), after which the stream ends. Every event has an `id`; reconnect with " +
        "`Last-Event-ID` (or `?lastEventId=`) to resume after it.",
      parameters: [
        jobIdParameter,
        { name: "Last-Event-ID", in: "header", required: false, schema: { type: "string" }, description: "Resume after this event id." },
      ],
      responses: { "200": { description: "An event stream.", content: { "text/event-stream": { schema: { type: "string" } } } }, ...errors(JOB_ERRORS) },
    },
  },
  "/v1/webhooks/secret": {
    get: {
      ...secured,
      tags: ["webhooks"],
      operationId: "webhooks-secret",
      summary: "Get your webhook signing secret",
      description: "The key's Standard Webhooks secret, made on first use; verify deliveries with it.",
      responses: { "200": json(ref("WebhookSecret"), "The secret."), ...errors(COMMON_ERRORS) },
    },
    post: {
      ...secured,
      tags: ["webhooks"],
      operationId: "webhooks-secret-rotate",
      summary: "Replace your webhook signing secret",
      description: "Makes a new secret; deliveries from now on are signed with it.",
      responses: { "200": json(ref("WebhookSecret"), "The new secret."), ...errors(COMMON_ERRORS) },
    },
  },
};

/** `document` with the jobs feature described; changes and returns it. */
export function documentJobs(document: OpenAPIObject): OpenAPIObject {
  for (const operation of JOB_OPERATIONS.values()) {
    const post = (document.paths?.[operation.restPath] as Record<string, Json> | undefined)?.post;
    if (post) decorateJobOperation(post);
  }
  Object.assign((document.paths ??= {}), JOBS_PATHS);
  const { schemas } = z.toJSONSchema(jobComponentSchemas, { uri: (id) => `#/components/schemas/${id}`, io: "output" });
  const components = (document.components ??= {});
  components.schemas ??= {};
  for (const [name, schema] of Object.entries(schemas)) {
    const { $schema: _schema, $id: _id, ...rest } = schema as Json;
    (components.schemas as Json)[name] = rest;
  }
  return document;
}
