/**
 * What the jobs feature adds to the OpenAPI document: on every POST operation the `Prefer` and
 * `Idempotency-Key` headers, the optional `webhookUrl` with its callback, the 202 answer with the
 * job and raw image answers for `Accept: image/*`; and the jobs and webhook-secret paths.
 *
 * Like the operations' part (trpc-to-openapi), it is generated with zod-openapi from the schemas
 * the jobs routes check and answer with (job-schemas.ts): every type, field, enum and required list
 * comes from them. Written here are only the texts (summaries, descriptions, examples); the error
 * responses come from the error table (core/errors.ts) and the headers from core/api-headers.ts.
 */
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { createDocument, createSchema, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from "zod-openapi";
import type { OpenAPIObject } from "trpc-to-openapi";
import { API_REQUEST_HEADERS, EVERY_ANSWER_HEADERS, type ApiRequestHeader, type ApiResponseHeader } from "../core/api-headers.js";
import { ERROR_KINDS, type ErrorCode } from "../core/errors.js";
import { errorSchema } from "../contract/error-schema.js";
import { JOB_OPERATIONS } from "./job-operations.js";
import {
  jobEventDataSchemas,
  jobEventsQuerySchema,
  jobListQuerySchema,
  jobListSchema,
  jobPathSchema,
  jobSchema,
  webhookEventSchema,
  webhookSecretSchema,
  webhookSignatureHeadersSchema,
  webhookUrlSchema,
  type JobList,
  type PublicJob,
  type WebhookSecret,
} from "./job-schemas.js";
import { MEDIA_TYPES } from "./raw-image.js";

type Json = Record<string, unknown>;

/** `#/components/schemas/Error`, as zod-openapi refers to the schema. */
const ERROR_REF = createSchema(errorSchema).schema;
/** A response header an answer may carry, described once in core/api-headers.ts (the document's `components.headers`). */
const responseHeader = (name: ApiResponseHeader) => ({ $ref: `#/components/headers/${name}` });
/** A request header as an operation's parameter, described once in core/api-headers.ts. */
const headerParameter = (name: ApiRequestHeader) => ({ name, in: "header" as const, required: false, ...API_REQUEST_HEADERS[name] });
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
  const response = (responses[status] ??= { description: "", headers: REQUEST_ID, content: { "application/json": { schema: ERROR_REF, examples: {} } } });
  const description = `\`${code}\`: ${ERROR_KINDS[code].description}`;
  response.description = response.description ? `${String(response.description)} ${description}` : description;
  const media = (response.content as Record<string, Json>)["application/json"]!;
  const examples = (media.examples ??= {}) as Json;
  examples[code] = { ...errorExample(code), ...extra };
  if (ERROR_KINDS[code].headers?.includes("Retry-After")) response.headers = { ...(response.headers as Json), "Retry-After": responseHeader("Retry-After") };
}

const COMMON_ERRORS: ErrorCode[] = ["UNAUTHORIZED", "INTERNAL"];
const JOB_ERRORS: ErrorCode[] = [...COMMON_ERRORS, "NOT_FOUND"];

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
} satisfies PublicJob;
const JOB_EXAMPLE_ACCEPTED = { ...JOB_EXAMPLE, operation: "generate" } satisfies PublicJob;
const CANCELED_EXAMPLE = {
  ...JOB_EXAMPLE,
  status: "canceled",
  finishedAt: "2026-11-25T09:00:01.000Z",
  progress: { fraction: 0, step: 0, steps: 0, stage: "canceled" },
  queuePosition: undefined,
  error: { code: "CANCELLED", message: "The job was canceled.", requestId: "req_3f9c2d7e", status: ERROR_KINDS.CANCELLED.http },
  expiresAt: "2026-11-26T09:00:01.000Z",
} satisfies PublicJob;
const SECRET_EXAMPLE = { object: "webhook_secret", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } satisfies WebhookSecret;
const LIST_EXAMPLE = { object: "list", data: [JOB_EXAMPLE], hasMore: false, nextCursor: null } satisfies JobList;

/** The raw image answers `Accept: image/*` gets (raw-image.ts): the image's bytes. */
const rawImageContent = Object.fromEntries(Object.values(MEDIA_TYPES).map((type) => [type, { schema: createSchema(z.string().meta({ format: "binary" })).schema }]));

const json = (schema: z.ZodType, description: string, example: unknown) => ({
  description,
  headers: REQUEST_ID,
  content: { "application/json": { schema, examples: { success: { value: example } } } },
});

const ACCEPTED_DESCRIPTION = "Accepted as a job (`Prefer: respond-async`, an unfinished `wait`, or a `webhookUrl`). Follow `Location`.";

/** Said of an operation whose requests are checked before they are accepted as jobs (JobOperation.precheck). */
const PRECHECKED =
  " The options (all but whether a named model is installed) and an image sent as a data URL (its format, its size, the result's size) are checked before the job is accepted: " +
  "a request the synchronous call refuses for them is refused the same way, with its status and body, and no job is made.";

/** What every POST operation gains: merged into the operation trpc-to-openapi made (see `decorateJobOperation`). */
const JOB_POST_ADDITIONS: ZodOpenApiOperationObject = {
  parameters: [headerParameter("Prefer"), headerParameter("Idempotency-Key")],
  requestBody: { content: { "application/json": { schema: z.object({ webhookUrl: webhookUrlSchema.optional() }) } } },
  responses: {
    "202": {
      description: ACCEPTED_DESCRIPTION,
      headers: { ...REQUEST_ID, Location: responseHeader("Location"), "Preference-Applied": responseHeader("Preference-Applied"), "Idempotent-Replayed": responseHeader("Idempotent-Replayed") },
      content: { "application/json": { schema: jobSchema, examples: { success: { value: JOB_EXAMPLE_ACCEPTED } } } },
    },
  },
  callbacks: {
    jobFinished: {
      "{$request.body#/webhookUrl}": {
        post: {
          summary: "The job has finished",
          description:
            "POSTed once the job has finished, signed per Standard Webhooks with the key's secret (`GET /api/v1/webhooks/secret`); " +
            "retried with exponential backoff for a day until a 2xx answer. Private addresses are refused unless allow-listed.",
          requestParams: { header: webhookSignatureHeadersSchema },
          requestBody: { required: true, content: { "application/json": { schema: webhookEventSchema } } },
          // Atelier is the caller here: the signature, not a key, authenticates it.
          security: [],
          responses: {
            "200": { description: "Any 2xx acknowledges the delivery." },
            "4XX": { description: "Any other answer (or none within ATELIER_WEBHOOK_TIMEOUT_MS) is retried with backoff for a day." },
          },
        },
      },
    },
  },
};

const secured = { security: [{ bearerAuth: [] }], tags: ["jobs"] };
const ownJob = { path: jobPathSchema };

/** An event of the stream as it is written: `id`, `event` and `data` lines. */
const sseEvent = (id: number, type: keyof typeof jobEventDataSchemas, data: unknown) => `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

const JOBS_PATHS: ZodOpenApiPathsObject = {
  "/v1/jobs": {
    get: {
      ...secured,
      operationId: "jobs-list",
      summary: "List your jobs",
      description: "The calling key's jobs, newest first, a page at a time.",
      requestParams: { query: jobListQuerySchema },
      responses: { "200": json(jobListSchema, "One page of jobs.", LIST_EXAMPLE), ...errors([...COMMON_ERRORS, "INVALID_INPUT"]) },
    },
  },
  "/v1/jobs/{id}": {
    get: {
      ...secured,
      operationId: "jobs-get",
      summary: "Get a job",
      description: "Status, progress, queue position, and once finished the result (exactly the synchronous body) or the error.",
      requestParams: ownJob,
      responses: { "200": json(jobSchema, "The job.", JOB_EXAMPLE), ...errors(JOB_ERRORS) },
    },
    delete: {
      ...secured,
      operationId: "jobs-cancel",
      summary: "Cancel a job",
      description: "Cancels a queued or running job; a running one stops on the worker within one step. Answers the canceled job.",
      requestParams: ownJob,
      responses: { "200": json(jobSchema, "The canceled job.", CANCELED_EXAMPLE), ...errors([...JOB_ERRORS, "JOB_CONFLICT"]) },
    },
  },
  "/v1/jobs/{id}/result": {
    get: {
      ...secured,
      operationId: "jobs-result",
      summary: "Get a job's result",
      description: "An image operation's image as raw bytes (its metadata in `X-Atelier-*` headers); other operations' JSON body.",
      requestParams: ownJob,
      responses: {
        "200": { description: "The result.", headers: REQUEST_ID, content: { ...rawImageContent, "application/json": { schema: jobSchema.shape.result.unwrap() } } },
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
        "for an image operation, the whole image as a data URL. Every event has an `id`; reconnect with `Last-Event-ID` (or `?lastEventId=`) to resume after it. " +
        "`x-event-data` gives the schema of each event's `data`.",
      parameters: [headerParameter("Last-Event-ID")],
      requestParams: { ...ownJob, query: jobEventsQuerySchema },
      responses: {
        "200": {
          description: "An event stream.",
          content: {
            "text/event-stream": {
              schema: z.string(),
              example:
                sseEvent(1, "status", { status: "queued" }) +
                sseEvent(2, "status", { status: "running" }) +
                sseEvent(3, "status", { status: "succeeded" }) +
                sseEvent(4, "result", { status: "succeeded", jobUrl: "/api/v1/jobs/job_3q2xv0aAT8m1b7KpZk9dWw", resultUrl: "/api/v1/jobs/job_3q2xv0aAT8m1b7KpZk9dWw/result" }),
              // Server-Sent Events have no schema of their own in OpenAPI 3.1: each event's `data` is described beside it.
              "x-event-data": Object.fromEntries(Object.entries(jobEventDataSchemas).map(([type, schema]) => [type, createSchema(schema, { io: "output" }).schema])),
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
      responses: { "200": json(webhookSecretSchema, "The secret.", SECRET_EXAMPLE), ...errors(COMMON_ERRORS) },
    },
    post: {
      ...secured,
      tags: ["webhooks"],
      operationId: "webhooks-secret-rotate",
      summary: "Replace your webhook signing secret",
      description: "Makes a new secret; deliveries from now on are signed with it.",
      responses: { "200": json(webhookSecretSchema, "The new secret.", SECRET_EXAMPLE), ...errors(COMMON_ERRORS) },
    },
  },
};

/** Where the rendered additions for POST operations sit in the document zod-openapi renders (never served). */
const ADDITIONS_PATH = "/job-post-additions";

/** The jobs paths and the POST additions as zod-openapi renders them, with the component schemas they refer to. */
function renderJobsParts(version: string) {
  const rendered = createDocument({
    openapi: "3.1.0",
    info: { title: "Atelier jobs", version },
    paths: { ...JOBS_PATHS, [ADDITIONS_PATH]: { post: JOB_POST_ADDITIONS } },
  });
  const { [ADDITIONS_PATH]: additions, ...paths } = rendered.paths ?? {};
  return { paths, additions: additions!.post as Json, schemas: (rendered.components?.schemas ?? {}) as Json };
}

function decorateJobOperation(operation: Json, additions: Json, prechecked: boolean): void {
  operation.parameters = [...((operation.parameters as unknown[]) ?? []), ...(additions.parameters as unknown[])];
  const responses = (operation.responses ??= {}) as Record<string, Json>;
  const ok = responses["200"];
  const bodyOf = (holder: Json) => ((holder.requestBody as Json | undefined)?.content as Record<string, { schema?: Json }> | undefined)?.["application/json"]?.schema;
  const schema = bodyOf(operation);
  if (schema?.properties) Object.assign(schema.properties as Json, bodyOf(additions)!.properties as Json);
  const images = ((ok?.content as Json | undefined)?.["application/json"] as { schema?: { properties?: Json } } | undefined)?.schema?.properties?.data !== undefined;
  if (ok && images) {
    ok.description =
      `${String(ok.description ?? "Successful response")}. With \`Accept: image/png\`, \`image/jpeg\` or \`image/webp\` the body is the image's bytes ` +
      "and the other fields travel in `X-Atelier-*` headers (`X-Atelier-Width`, `X-Atelier-Height`, `X-Atelier-Model`, ...).";
    ok.content = { ...(ok.content as Json), ...rawImageContent };
  }
  if (ok) ok.headers = { ...(ok.headers as Json), "Idempotent-Replayed": responseHeader("Idempotent-Replayed") };
  const accepted = (additions.responses as Record<string, Json>)["202"]!;
  responses["202"] = prechecked ? { ...accepted, description: `${ACCEPTED_DESCRIPTION}${PRECHECKED}` } : accepted;
  for (const code of ["JOB_CONFLICT", "IDEMPOTENCY_MISMATCH", "TOO_MANY_JOBS"] as const) addError(responses, code);
  if (images) {
    const success = ((operation.requestBody as Json | undefined)?.content as Record<string, { examples?: Record<string, { value?: Json }> }> | undefined)?.["application/json"]?.examples?.success?.value;
    // `x-request` and `x-headers` provoke it: the success body in PNG, asked for as WebP.
    addError(responses, "NOT_ACCEPTABLE", success ? { "x-request": { ...success, outputFormat: "png" }, "x-headers": { accept: "image/webp" } } : {});
  }
  operation.callbacks = additions.callbacks;
}

/** `document` with the jobs feature described; changes and returns it. */
export function documentJobs(document: OpenAPIObject): OpenAPIObject {
  const { paths, additions, schemas } = renderJobsParts(document.info.version);
  for (const operation of JOB_OPERATIONS.values()) {
    const post = (document.paths?.[operation.restPath] as Record<string, Json> | undefined)?.post;
    if (post) decorateJobOperation(post, additions, operation.precheck !== undefined);
  }
  Object.assign((document.paths ??= {}), paths);
  const components = ((document.components ??= {}).schemas ??= {}) as Json;
  for (const [name, schema] of Object.entries(schemas)) {
    // One name, one schema: a component both generators render (`Error`) must come out the same.
    if (name in components && !isDeepStrictEqual(components[name], schema)) throw new Error(`OpenAPI component ${name} is rendered twice, differently`);
    components[name] = schema;
  }
  return document;
}
