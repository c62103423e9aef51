/**
 * What the jobs feature adds to the OpenAPI document: on every POST operation the `Prefer` and
 * `Idempotency-Key` headers, the 202 answer with the job, raw image answers for `Accept: image/*`,
 * the optional `webhookUrl` with its callback; and the jobs and webhook-secret paths.
 */
import { z } from "zod";
import type { OpenAPIObject } from "trpc-to-openapi";
import { API_REQUEST_HEADERS, EVERY_ANSWER_HEADERS, type ApiRequestHeader, type ApiResponseHeader } from "../core/api-headers.js";
import { ERROR_KINDS, type ErrorCode } from "../core/errors.js";
import { JOB_OPERATIONS } from "./job-operations.js";
import { JOB_STATUSES } from "./job-record.js";
import { jobComponentSchemas } from "./job-schemas.js";

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorContent = { "application/json": { schema: ref("Error") } };
/** A response header an answer may carry, described once in core/api-headers.ts (the document's `components.headers`). */
const responseHeader = (name: ApiResponseHeader) => ({ $ref: `#/components/headers/${name}` });
/** A request header as an operation's parameter, described once in core/api-headers.ts. */
const headerParameter = (name: ApiRequestHeader) => ({ name, in: "header", required: false, ...API_REQUEST_HEADERS[name] });
const REQUEST_ID = Object.fromEntries(EVERY_ANSWER_HEADERS.map((name) => [name, responseHeader(name)]));

/** The shape of core/errors.ts's example for `code`, as the rest of the document gives it. */
function errorExample(code: ErrorCode) {
  return { summary: ERROR_KINDS[code].description, value: { code, message: ERROR_KINDS[code].example, requestId: "req_3f9c2d7e" } };
}

/** Error responses for `codes`, grouped by status, one example per code. */
function errors(codes: ErrorCode[]): Record<string, Json> {
  const responses: Record<string, Json> = {};
  for (const code of codes) addError(responses, code);
  return responses;
}

/** Adds `code` to the response of its status, creating the response or extending an existing one. */
function addError(responses: Record<string, Json>, code: ErrorCode, extra: Json = {}): void {
  const status = String(ERROR_KINDS[code].http);
  const response = (responses[status] ??= { description: "", headers: REQUEST_ID, content: { "application/json": { schema: ref("Error"), examples: {} } } });
  const description = `\`${code}\`: ${ERROR_KINDS[code].description}`;
  response.description = response.description ? `${String(response.description)} ${description}` : description;
  const media = (response.content as Record<string, Json>)["application/json"]!;
  const examples = (media.examples ??= {}) as Json;
  examples[code] = { ...errorExample(code), ...extra };
  if (ERROR_KINDS[code].headers?.includes("Retry-After")) response.headers = { ...(response.headers as Json), "Retry-After": responseHeader("Retry-After") };
}

const COMMON_ERRORS: ErrorCode[] = ["UNAUTHORIZED", "INTERNAL"];
const JOB_ERRORS: ErrorCode[] = [...COMMON_ERRORS, "NOT_FOUND"];

const jobIdParameter = { name: "id", in: "path", required: true, description: "The job's id.", schema: { type: "string" }, example: "job_3q2xv0aAT8m1b7KpZk9dWw" };

const JOB_POST_PARAMETERS = [headerParameter("Prefer"), headerParameter("Idempotency-Key")];

const JOB_EXAMPLE_ACCEPTED = {
  id: "job_3q2xv0aAT8m1b7KpZk9dWw",
  object: "job",
  operation: "generate",
  status: "queued",
  createdAt: "2026-11-25T09:00:00.000Z",
  startedAt: null,
  finishedAt: null,
  progress: { fraction: 0, step: 0, steps: 0, stage: "queued" },
  queuePosition: 1,
  expiresAt: null,
};

const jobAccepted = {
  description: "Accepted as a job (`Prefer: respond-async`, an unfinished `wait`, or a `webhookUrl`). Follow `Location`.",
  headers: { ...REQUEST_ID, Location: responseHeader("Location"), "Preference-Applied": responseHeader("Preference-Applied"), "Idempotent-Replayed": responseHeader("Idempotent-Replayed") },
  content: { "application/json": { schema: ref("Job"), examples: { success: { value: JOB_EXAMPLE_ACCEPTED } } } },
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
        // Atelier is the caller here: the signature, not a key, authenticates it.
        security: [],
        responses: {
          "200": { description: "Any 2xx acknowledges the delivery." },
          "4XX": { description: "Any other answer (or none within ATELIER_WEBHOOK_TIMEOUT_MS) is retried with backoff for a day." },
        },
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

/** Said of an operation whose requests are checked before they are accepted as jobs (JobOperation.precheck). */
const PRECHECKED =
  " The options (all but whether a named model is installed) and an image sent as a data URL (its format, its size, the result's size) are checked before the job is accepted: " +
  "a request the synchronous call refuses for them is refused the same way, with its status and body, and no job is made.";

function decorateJobOperation(operation: Json, prechecked: boolean): void {
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
  if (ok) ok.headers = { ...(ok.headers as Json), "Idempotent-Replayed": responseHeader("Idempotent-Replayed") };
  responses["202"] = prechecked ? { ...jobAccepted, description: `${jobAccepted.description}${PRECHECKED}` } : jobAccepted;
  for (const code of ["JOB_CONFLICT", "IDEMPOTENCY_MISMATCH", "TOO_MANY_JOBS"] as const) addError(responses, code);
  if (images) {
    const success = ((operation.requestBody as Json | undefined)?.content as Record<string, { examples?: Record<string, { value?: Json }> }> | undefined)?.["application/json"]?.examples?.success?.value;
    // `x-request` and `x-headers` provoke it: the success body in PNG, asked for as WebP.
    addError(responses, "NOT_ACCEPTABLE", success ? { "x-request": { ...success, outputFormat: "png" }, "x-headers": { accept: "image/webp" } } : {});
  }
  operation.callbacks = webhookCallback;
}

const json = (schema: Json, description: string, example: unknown) => ({
  description,
  headers: REQUEST_ID,
  content: { "application/json": { schema, examples: { success: { value: example } } } },
});

const JOB_EXAMPLE = {
  id: "job_3q2xv0aAT8m1b7KpZk9dWw",
  object: "job",
  operation: "prompt/improve",
  status: "queued",
  createdAt: "2026-11-25T09:00:00.000Z",
  startedAt: null,
  finishedAt: null,
  progress: { fraction: 0, step: 0, steps: 0, stage: "queued" },
  queuePosition: 1,
  expiresAt: null,
};
const CANCELED_EXAMPLE = {
  ...JOB_EXAMPLE,
  status: "canceled",
  finishedAt: "2026-11-25T09:00:01.000Z",
  progress: { fraction: 0, step: 0, steps: 0, stage: "canceled" },
  queuePosition: undefined,
  error: { code: "CANCELLED", message: "The job was canceled.", requestId: "req_3f9c2d7e", status: ERROR_KINDS.CANCELLED.http },
  expiresAt: "2026-11-26T09:00:01.000Z",
};
const SECRET_EXAMPLE = { object: "webhook_secret", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" };
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
      responses: { "200": json(ref("JobList"), "One page of jobs.", { object: "list", data: [JOB_EXAMPLE], hasMore: false, nextCursor: null }), ...errors([...COMMON_ERRORS, "INVALID_INPUT"]) },
    },
  },
  "/v1/jobs/{id}": {
    get: {
      ...secured,
      operationId: "jobs-get",
      summary: "Get a job",
      description: "Status, progress, queue position, and once finished the result (exactly the synchronous body) or the error.",
      parameters: [jobIdParameter],
      responses: { "200": json(ref("Job"), "The job.", JOB_EXAMPLE), ...errors(JOB_ERRORS) },
    },
    delete: {
      ...secured,
      operationId: "jobs-cancel",
      summary: "Cancel a job",
      description: "Cancels a queued or running job; a running one stops on the worker within one step. Answers the canceled job.",
      parameters: [jobIdParameter],
      responses: { "200": json(ref("Job"), "The canceled job.", CANCELED_EXAMPLE), ...errors([...JOB_ERRORS, "JOB_CONFLICT"]) },
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
        ...errors([...JOB_ERRORS, "JOB_CONFLICT", "RESULT_GONE", "TOO_MANY_STREAMS"]),
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
        "or `error` (the error body with the synchronous call's HTTP `status`), after which the stream ends. The `result` event says where the result is: " +
        '`{"status": "succeeded", "jobUrl": "/api/v1/jobs/{id}", "resultUrl": "/api/v1/jobs/{id}/result"}`; fetch either for the result ' +
        "(the job's `result` is the synchronous body). With `?include=result` it also carries that body as `result` (null once purged): " +
        "for an image operation, the whole image as a data URL. Every event has an `id`; reconnect with `Last-Event-ID` (or `?lastEventId=`) to resume after it.",
      parameters: [
        jobIdParameter,
        headerParameter("Last-Event-ID"),
        {
          name: "include",
          in: "query",
          required: false,
          schema: { type: "string", enum: ["result"] },
          description: "`result`: the `result` event carries the synchronous body too, as `result` (an image operation's image as a data URL, megabytes of base64).",
        },
      ],
      responses: {
        "200": {
          description: "An event stream.",
          content: {
            "text/event-stream": {
              schema: { type: "string" },
              example:
                'id: 1\nevent: status\ndata: {"status":"queued"}\n\n' +
                'id: 2\nevent: status\ndata: {"status":"running"}\n\n' +
                'id: 3\nevent: status\ndata: {"status":"succeeded"}\n\n' +
                'id: 4\nevent: result\ndata: {"status":"succeeded","jobUrl":"/api/v1/jobs/job_3q2xv0aAT8m1b7KpZk9dWw","resultUrl":"/api/v1/jobs/job_3q2xv0aAT8m1b7KpZk9dWw/result"}\n\n',
            },
          },
        },
        ...errors([...JOB_ERRORS, "INVALID_INPUT", "TOO_MANY_STREAMS"]),
      },
    },
  },
  "/v1/webhooks/secret": {
    get: {
      ...secured,
      tags: ["webhooks"],
      operationId: "webhooks-secret",
      summary: "Get your webhook signing secret",
      description: "The key's Standard Webhooks secret, made on first use; verify deliveries with it.",
      responses: { "200": json(ref("WebhookSecret"), "The secret.", SECRET_EXAMPLE), ...errors(COMMON_ERRORS) },
    },
    post: {
      ...secured,
      tags: ["webhooks"],
      operationId: "webhooks-secret-rotate",
      summary: "Replace your webhook signing secret",
      description: "Makes a new secret; deliveries from now on are signed with it.",
      responses: { "200": json(ref("WebhookSecret"), "The new secret.", SECRET_EXAMPLE), ...errors(COMMON_ERRORS) },
    },
  },
};

/** `document` with the jobs feature described; changes and returns it. */
export function documentJobs(document: OpenAPIObject): OpenAPIObject {
  for (const operation of JOB_OPERATIONS.values()) {
    const post = (document.paths?.[operation.restPath] as Record<string, Json> | undefined)?.post;
    if (post) decorateJobOperation(post, operation.precheck !== undefined);
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
