/**
 * The OpenAPI document, generated from the code: paths and schemas from the router's zod schemas
 * (trpc-to-openapi; the router is built from contract/operations.ts), examples from the list of
 * operations, and the error responses of each operation from the one error table
 * (core/errors.ts): a kind is listed on every operation its scope covers, so a new kind needs no
 * edit here.
 */
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { API_RESPONSE_HEADERS, EVERY_ANSWER_HEADERS, type ApiResponseHeader } from "../core/api-headers.js";
import { defaultOf } from "../core/config.js";
import { ERROR_KINDS, type ErrorCode, type ErrorHeader, type ErrorScope } from "../core/errors.js";
import { appRouter } from "../server/router.js";
import { errorSchema } from "../contract/error-schema.js";
import type { OperationExamples } from "../contract/operation-examples.js";
import { OPERATIONS, openApiOperationId, type Operation as ListedOperation } from "../contract/operations.js";
import { HEALTH_OPENAPI_PATHS } from "../operations/health/health-openapi.js";

const ERROR_CODES = Object.keys(ERROR_KINDS) as [ErrorCode, ...ErrorCode[]];

const TAGS = [
  { name: "generation", description: "Text to image." },
  { name: "tools", description: "Operations on an image given by URL or sent as a file: upscaling, style transfer, background removal and replacement." },
  { name: "prompt", description: "Prompt improvement." },
  { name: "models", description: "The model catalog: what this server can run and how an operator installs the rest." },
  { name: "health", description: "Liveness and readiness for load balancers and orchestrators, at the root of the server." },
];

// Every response header is described once, in core/api-headers.ts; operations refer to those.
type HeaderName = ApiResponseHeader;
const RATE_LIMIT_HEADERS: HeaderName[] = ["RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];
const headerRefs = (names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const ERROR_HEADERS: Record<ErrorHeader, HeaderName[]> = {
  "Retry-After": ["Retry-After"],
  "WWW-Authenticate": ["WWW-Authenticate"],
  Allow: ["Allow"],
  RateLimit: RATE_LIMIT_HEADERS,
};

const INFO_DESCRIPTION =
  "Self-hosted image AI: generation, upscaling, style transfer, background removal and prompt improvement. " +
  "Authenticate with `Authorization: Bearer <API key>` (an operator creates keys with `npm run keys -- create`). " +
  `Every key has an hourly quota (${defaultOf("ATELIER_RATE_LIMIT_PER_HOUR")} requests by default), and the keys of one console user also share that user's hourly allowance; responses carry the tighter of the two in \`RateLimit\` headers. ` +
  "Images are sent as `imageUrl` (an `http(s)://` URL the server fetches, or a `data:image/...;base64,` URL), or as a file in the `image` part of a `multipart/form-data` form " +
  "(every operation that takes an image takes its body as such a form too, its other fields as form fields), and returned as data URLs.\n\n" +
  "Every error is JSON (the `Error` schema) with one of these codes:\n\n| Status | Code | Meaning |\n|---|---|---|\n" +
  Object.entries(ERROR_KINDS)
    .filter(([, kind]) => kind.scope !== "unseen")
    .map(([code, kind]) => `| ${kind.http} | \`${code}\` | ${kind.description} |`)
    .join("\n");

interface MediaType {
  schema?: { properties?: Record<string, unknown>; $ref?: string };
  examples?: Record<string, unknown>;
}
interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
}
interface Operation {
  operationId?: string;
  description?: string;
  security?: unknown[];
  requestBody?: { content?: Record<string, MediaType> };
  responses: Record<string, Response>;
}

/** The scopes of core/errors.ts an operation falls under, read from its own schemas and its entry in the list. */
function scopesOf(operation: Operation, listed?: ListedOperation): Set<ErrorScope> {
  const scopes = new Set<ErrorScope>(["path", "any"]);
  const input = operation.requestBody?.content?.["application/json"]?.schema?.properties ?? {};
  const output = operation.responses["200"]?.content?.["application/json"]?.schema?.properties ?? {};
  // Every operation with a body runs its work on a worker's queue.
  if (operation.requestBody) scopes.add("body").add("work");
  if ((operation.security ?? []).length > 0) scopes.add("key");
  if ("imageUrl" in input) scopes.add("image-input");
  if ("data" in output && "model" in output) scopes.add("image-output");
  // Operations that name a model, and those that run one of their model task on an image, can need one not installed.
  if ("model" in input || ("imageUrl" in input && listed !== undefined && "modelTask" in listed)) scopes.add("model");
  return scopes;
}

function errorExample(code: ErrorCode, examples: OperationExamples | undefined) {
  const given = examples?.errors?.[code];
  const value = {
    code,
    message: given?.message ?? ERROR_KINDS[code].example,
    requestId: "req_3f9c2d7e",
    ...(given?.issues ? { issues: given.issues } : {}),
  };
  // `x-request` is the body that provokes it: readers see the cause, test/contract sends it.
  return { summary: given?.summary ?? ERROR_KINDS[code].description, value, ...(given ? { "x-request": given.request } : {}) };
}

/** Every error status the operation can answer, each with its kinds, headers and an example per kind. */
function errorResponses(operation: Operation, examples: OperationExamples | undefined, scopes = scopesOf(operation)): Record<string, Response> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ERROR_CODES) {
    const kind = ERROR_KINDS[code];
    if (scopes.has(kind.scope)) byStatus.set(kind.http, [...(byStatus.get(kind.http) ?? []), code]);
  }
  for (const code of Object.keys(examples?.errors ?? {}) as ErrorCode[]) {
    if (!scopes.has(ERROR_KINDS[code].scope)) {
      throw new Error(`${operation.operationId}: an example of ${code}, which the error table says this operation cannot answer (scope ${ERROR_KINDS[code].scope})`);
    }
  }
  const responses: Record<string, Response> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: HeaderName[] = [...EVERY_ANSWER_HEADERS, ...new Set(codes.flatMap((code) => (ERROR_KINDS[code].headers ?? []).flatMap((name) => ERROR_HEADERS[name])))];
    responses[String(status)] = {
      description: codes.map((code) => `\`${code}\`: ${ERROR_KINDS[code].description}`).join(" "),
      headers: headerRefs(headers),
      content: {
        "application/json": {
          schema: { $ref: "#/components/schemas/Error" },
          examples: Object.fromEntries(codes.map((code) => [code, errorExample(code, examples)])),
        },
      },
    };
  }
  return responses;
}

function listedByOperationId(): Map<string, ListedOperation> {
  return new Map(OPERATIONS.map((operation) => [openApiOperationId(operation), operation]));
}

export function buildOpenApiDocument(version: string): OpenAPIObject {
  const document = generateOpenApiDocument(appRouter, {
    title: "Atelier API",
    description: INFO_DESCRIPTION,
    version,
    baseUrl: "/api",
    securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API key from `npm run keys -- create`." } },
    defs: { Error: errorSchema },
  });
  document.info.license = { name: "MIT", identifier: "MIT" };
  // Whoever runs this deployment answers for it; the document is served by each deployment.
  document.info.contact = { name: "The operator of this Atelier server" };
  document.servers = [{ url: "/api", description: "This server (the document is served at /api/v1/openapi.json)." }];
  document.tags = TAGS;
  document.components ??= {};
  document.components.headers = { ...API_RESPONSE_HEADERS };
  // trpc-to-openapi adds its own tRPC error shapes; errors here have one schema, `Error`.
  for (const name of Object.keys(document.components.schemas ?? {})) {
    if (name.startsWith("error.")) delete document.components.schemas![name];
  }

  const listed = listedByOperationId();
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, Operation>)) {
      const entry = listed.get(operation.operationId ?? "");
      const own = entry?.examples;
      if (own && own.needs.length > 0) {
        operation.description = `${operation.description ?? ""}\n\nThe examples run on a server where \`npm run models -- pull ${own.needs.join(" ")}\` has installed the models they use.`;
      }
      const metered = (operation.security ?? []).length > 0;
      if (!metered) operation.security = [];
      const success = operation.responses["200"]!;
      success.description = "The result.";
      success.headers = headerRefs([...EVERY_ANSWER_HEADERS, ...(metered ? RATE_LIMIT_HEADERS : [])]);
      if (own) {
        const json = success.content?.["application/json"];
        if (json) json.examples = { success: { summary: own.success.summary, value: own.success.response } };
        const body = operation.requestBody?.content?.["application/json"];
        if (body && own.success.request !== undefined) body.examples = { success: { summary: own.success.summary, value: own.success.request } };
      }
      operation.responses = { "200": success, ...errorResponses(operation, own, scopesOf(operation, entry)) };
    }
  }
  // Health endpoints live outside the router (no key, no quota): their entries are written by hand,
  // and like every path they answer other methods with 405.
  for (const [path, item] of Object.entries(HEALTH_OPENAPI_PATHS)) {
    const operation = item.get as unknown as Operation;
    const [status, response] = Object.entries(errorResponses(operation, undefined, new Set(["path"])))[0]!;
    (document.paths ??= {})[path] = { ...item, get: { ...item.get, responses: { ...item.get.responses, [status]: response } } };
  }
  return document;
}
