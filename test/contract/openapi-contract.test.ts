/**
 * The served OpenAPI document is the contract: every operation has a success example, and every
 * example (success and error) is sent to a real server and its answer validated against the
 * document with ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1): status documented, documented
 * headers present and well-formed, body valid against the operation's schema with every object
 * closed, so a field or a status the document does not state fails here.
 *
 * Errors are provoked by the body in the example's `x-request` (sent with a valid key), or, for the
 * kinds no body can cause, by the request that causes them (no key, a spent key, a wrong method, a
 * wrong media type, bad JSON, an oversized body). Kinds no client request can cause (a crashed
 * worker, a full queue) are checked against the schema only, and listed in UNPROVOKABLE.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_KINDS, type ErrorCode } from "../../core/errors.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { startTestService, type TestService } from "../support/test-service.js";

const modelsFolder = fileTempDir("test-models");

/** Kinds that no request of a client can cause on a healthy server. */
const UNPROVOKABLE = new Set<ErrorCode>(["INTERNAL", "WORKER_UNAVAILABLE", "OVERLOADED", "STORE_UNAVAILABLE", "DEADLINE_EXCEEDED", "IMAGE_TOO_LARGE", "SOURCE_FETCH_FAILED",
  // Jobs kinds that take a sequence of requests (a reused Idempotency-Key, a full queue): test/jobs provokes them.
  "JOB_CONFLICT", "IDEMPOTENCY_MISMATCH", "TOO_MANY_JOBS"]);
/** The jobs API's own paths need a job to exist first; test/jobs/jobs-openapi.test.ts walks them. */
const STATEFUL_TAGS = ["jobs", "webhooks"];
const MAX_BODY_BYTES = 64 * 1024;
const OUTPUT_LIMIT_PIXELS = 1_000_000;

const MODELS = ["cvae-quickdraw", "mathura", "portrait-selfie"];
const MIRROR_FOLDERS = ["cvae-quickdraw", "style-fast-ml5", "portrait-seg-mediapipe-selfie"];
const available = MIRROR_FOLDERS.every((folder) => hasMirrorModel(folder));

type Schema = Record<string, unknown>;
interface Example {
  summary?: string;
  value: unknown;
  "x-request"?: unknown;
  /** Request headers sent with `x-request` (e.g. `Accept` for NOT_ACCEPTABLE). */
  "x-headers"?: Record<string, string>;
}
interface MediaType {
  schema: Schema;
  examples?: Record<string, Example>;
}
interface ResponseObject {
  description: string;
  headers?: Record<string, Schema>;
  content?: Record<string, MediaType>;
}
interface Operation {
  operationId: string;
  tags?: string[];
  security?: unknown[];
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
}
interface Document {
  paths: Record<string, Record<string, Operation> & { servers?: { url: string }[] }>;
  components: { schemas: Record<string, Schema>; headers: Record<string, Schema> };
  servers: { url: string }[];
}

let service: TestService;
let document: Document;
let key: string;
const ajv = new Ajv2020({ allErrors: true, strict: true });
// OpenAPI's own annotation keyword on schemas.
ajv.addKeyword({ keyword: "example" });

beforeAll(async () => {
  if (!available) return;
  const modelsDir = await installModels(modelsFolder, MODELS);
  // An output limit under 1 MP (the default is 16.8 MP) lets the generate example show OUTPUT_TOO_LARGE.
  service = await startTestService({ ATELIER_MODELS_DIR: modelsDir, ATELIER_MAX_BODY_BYTES: String(MAX_BODY_BYTES), ATELIER_MAX_OUTPUT_PIXELS: String(OUTPUT_LIMIT_PIXELS) });
  key = await service.createKey("contract", 10_000);
  document = (await (await fetch(`${service.url}/api/v1/openapi.json`)).json()) as Document;
}, 300_000);
afterAll(async () => {
  await service?.close();
});

/** Replaces `$ref`s by what they name (the document has no recursive schema). */
function resolve<T>(value: T): T {
  if (Array.isArray(value)) return value.map(resolve) as T;
  if (value === null || typeof value !== "object") return value;
  const ref = (value as { $ref?: string }).$ref;
  if (ref) {
    const target = ref.replace(/^#\//, "").split("/").reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document);
    return resolve(target as T);
  }
  return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, resolve(inner)])) as T;
}

/** Every object schema refuses properties it does not list: an undocumented field fails. */
function closed(schema: Schema): Schema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== "object") return node;
    const copy = Object.fromEntries(Object.entries(node).map(([name, inner]) => [name, name === "example" ? inner : walk(inner)])) as Schema;
    if (copy.type === "object" && copy.properties && copy.additionalProperties === undefined) copy.additionalProperties = false;
    return copy;
  };
  return walk(schema) as Schema;
}

const validators = new WeakMap<Schema, ValidateFunction>();
function validate(schema: Schema, value: unknown, what: string): void {
  let check = validators.get(schema);
  if (!check) {
    check = ajv.compile(closed(resolve(schema)));
    validators.set(schema, check);
  }
  const valid = check(value);
  expect(valid ? [] : check.errors, `${what}: ${JSON.stringify(value).slice(0, 300)}`).toEqual([]);
}

interface Sent {
  method: string;
  headers?: Record<string, string> | undefined;
  body?: string;
  contentType?: string;
  key?: string | undefined;
}

async function send(path: string, request: Sent): Promise<Response> {
  const headers: Record<string, string> = { ...request.headers };
  if (request.contentType) headers["content-type"] = request.contentType;
  if (request.key) headers.authorization = `Bearer ${request.key}`;
  // A path may name its own server (the health endpoints live at the root, outside `/api`).
  const base = (document.paths[path]!.servers ?? document.servers)[0]!.url.replace(/\/$/, "");
  return fetch(`${service.url}${base}${path}`, { method: request.method, headers, ...(request.body === undefined ? {} : { body: request.body }) });
}

/** Checks an answer against the operation's documented response for its status. */
async function expectDocumented(operation: Operation, response: Response, what: string): Promise<unknown> {
  const status = String(response.status);
  const documented = operation.responses[status];
  const body: unknown = await response.json();
  expect(documented, `${what}: status ${status} is not documented (${JSON.stringify(body).slice(0, 300)})`).toBeDefined();
  for (const [name, header] of Object.entries(resolve(documented!.headers ?? {}))) {
    const value = response.headers.get(name);
    if (value === null) continue;
    const type = (header.schema as { type: string }).type;
    if (type === "integer") expect(value, `${what}: header ${name}`).toMatch(/^\d+$/);
  }
  expect(response.headers.get("x-request-id"), `${what}: X-Request-Id`).toBeTruthy();
  validate(documented!.content!["application/json"]!.schema, body, `${what}: body of ${status}`);
  return body;
}

/** The request that causes `code` on this operation, or undefined when no client request can. */
async function provoke(path: string, method: string, operation: Operation, code: ErrorCode, example: Example): Promise<Response | undefined> {
  const success = JSON.stringify(operation.requestBody?.content["application/json"]?.examples?.success?.value ?? {});
  const json = "application/json";
  if (example["x-request"] !== undefined) return send(path, { method, body: JSON.stringify(example["x-request"]), contentType: json, key, headers: example["x-headers"] });
  switch (code) {
    case "UNAUTHORIZED":
      return send(path, { method, body: success, contentType: json });
    case "RATE_LIMITED": {
      const spent = await service.createKey(`spent-${operation.operationId}`, 1);
      await send(path, { method, body: "{}", contentType: json, key: spent });
      return send(path, { method, body: success, contentType: json, key: spent });
    }
    case "KEY_EXPIRED": {
      const expiresAt = new Date(Date.now() + 50);
      const { key: expiring } = await service.services.keys.create({ name: `expired-${operation.operationId}`, expiresAt });
      await new Promise((resolve) => setTimeout(resolve, 100));
      return send(path, { method, body: success, contentType: json, key: expiring });
    }
    case "KEY_SCOPE_DENIED": {
      // A key limited to one operation calling another one.
      const other = operation.operationId === "prompt-improve" ? "generate" : "prompt.improve";
      const { key: scoped } = await service.services.keys.create({ name: `scoped-${operation.operationId}`, scopes: [other] });
      return send(path, { method, body: success, contentType: json, key: scoped });
    }
    case "METHOD_NOT_ALLOWED":
      return send(path, { method: "DELETE", key });
    case "UNSUPPORTED_MEDIA_TYPE":
      return send(path, { method, body: success, contentType: "text/plain", key });
    case "MALFORMED_JSON":
      return send(path, { method, body: "{", contentType: json, key });
    case "MALFORMED_MULTIPART":
      return send(path, { method, body: "--x\r\n", contentType: "multipart/form-data", key });
    case "PAYLOAD_TOO_LARGE":
      return send(path, { method, body: JSON.stringify({ padding: "x".repeat(MAX_BODY_BYTES) }), contentType: json, key });
    default:
      return undefined;
  }
}

function isErrorSchema(response: ResponseObject): boolean {
  return response.content?.["application/json"]?.schema.$ref === "#/components/schemas/Error";
}

function operations(): [string, string, Operation][] {
  const methods = ["get", "post", "put", "patch", "delete"];
  return Object.entries(document.paths)
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => methods.includes(method))
        .map(([method, operation]): [string, string, Operation] => [path, method, operation as Operation]),
    )
    .filter(([, , operation]) => !(operation.tags ?? []).some((tag) => STATEFUL_TAGS.includes(tag)));
}

/** Error statuses: 202 (a job, `Prefer: respond-async`) is a success that test/jobs walks. */
const isError = (status: string) => !status.startsWith("2");

describe.runIf(available)("the served OpenAPI document as a contract", () => {
  it("documents every operation with a success example and every error status with one example per code", () => {
    expect(operations().length).toBeGreaterThanOrEqual(6);
    for (const [path, method, operation] of operations()) {
      const what = `${method.toUpperCase()} ${path}`;
      expect(operation.responses["200"]?.content?.["application/json"]?.examples?.success, `${what}: success response example`).toBeDefined();
      if (operation.requestBody) expect(operation.requestBody.content["application/json"]?.examples?.success, `${what}: success request example`).toBeDefined();
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.description, `${what} ${status}: description`).toBeTruthy();
        const examples = response.content?.["application/json"]?.examples ?? {};
        expect(Object.keys(examples).length, `${what} ${status}: examples`).toBeGreaterThan(0);
        for (const [name, example] of Object.entries(examples)) validate(response.content!["application/json"]!.schema, example.value, `${what} ${status} example ${name}`);
        if (!isError(status) || !isErrorSchema(response)) continue;
        for (const code of Object.keys(examples)) expect(String(ERROR_KINDS[code as ErrorCode]?.http), `${what}: ${code} under ${status}`).toBe(status);
      }
    }
  });

  it("answers every success example as documented", async () => {
    for (const [path, method, operation] of operations()) {
      const what = `${method.toUpperCase()} ${path} success example`;
      const request = operation.requestBody?.content["application/json"]?.examples?.success?.value;
      const response = await send(path, { method: method.toUpperCase(), ...(request === undefined ? {} : { body: JSON.stringify(request), contentType: "application/json" }), key });
      const body = await expectDocumented(operation, response, what);
      expect(response.status, what).toBe(200);
      if (operation.security?.length) expect(response.headers.get("x-ratelimit-remaining"), `${what}: rate-limit headers`).toMatch(/^\d+$/);
      expect(body).toBeTypeOf("object");
    }
  }, 300_000);

  it("answers every success example sent as the multipart form the document offers beside JSON", async () => {
    let forms = 0;
    for (const [path, method, operation] of operations()) {
      const multipart = operation.requestBody?.content["multipart/form-data"];
      if (!multipart) continue;
      forms += 1;
      const what = `${method.toUpperCase()} ${path} success example as multipart/form-data`;
      const fields = (resolve(multipart.schema) as { properties: Record<string, Schema> }).properties;
      const json = operation.requestBody!.content["application/json"]!;
      const jsonFields = (resolve(json.schema) as { properties: Record<string, Schema> }).properties;
      // The form's file part that stands for a JSON field of another name (`image` for `imageUrl`).
      const filePart = Object.keys(fields).find((name) => !(name in jsonFields));
      expect(fields[filePart ?? ""], `${what}: a file part of its own`).toMatchObject({ type: "string", format: "binary" });
      const body = new FormData();
      for (const [name, value] of Object.entries(json.examples!.success!.value as Record<string, unknown>)) {
        if (name in fields) body.append(name, typeof value === "string" ? value : JSON.stringify(value));
        else body.append(filePart!, new Blob([Buffer.from(String(value).split(",")[1]!, "base64")]), "example.png");
      }
      const response = await fetch(`${service.url}${path}`, { method: method.toUpperCase(), headers: { authorization: `Bearer ${key}` }, body });
      await expectDocumented(operation, response, what);
      expect(response.status, what).toBe(200);
    }
    expect(forms, "operations that take an image offer a form").toBeGreaterThanOrEqual(3);
  }, 300_000);

  it("answers every error example with its status and code, as documented", async () => {
    const unprovoked = new Set<ErrorCode>();
    let sent = 0;
    for (const [path, method, operation] of operations()) {
      for (const [status, documented] of Object.entries(operation.responses)) {
        // Non-error answers (202 jobs) and non-Error schemas (readiness's 503) describe server states, not requests: checked as schemas above.
        if (!isError(status) || !isErrorSchema(documented)) continue;
        for (const [name, example] of Object.entries(documented.content!["application/json"]!.examples!)) {
          const code = name as ErrorCode;
          const what = `${method.toUpperCase()} ${path} ${status} ${code}`;
          const response = await provoke(path, method.toUpperCase(), operation, code, example);
          if (!response) {
            unprovoked.add(code);
            continue;
          }
          sent += 1;
          const body = (await expectDocumented(operation, response, what)) as { code: string };
          expect([response.status, body.code], what).toEqual([Number(status), code]);
          for (const header of ERROR_KINDS[code].headers ?? []) {
            if (header === "Retry-After" && code !== "RATE_LIMITED" && code !== "MODEL_NOT_INSTALLED") continue;
            expect(response.headers.get(header === "RateLimit" ? "RateLimit-Policy" : header), `${what}: ${header}`).toBeTruthy();
          }
        }
      }
    }
    expect([...unprovoked].filter((code) => !UNPROVOKABLE.has(code)), "error examples no request provoked").toEqual([]);
    // Six operations, each with several provokable kinds: a walk that sent few requests walked nothing.
    expect(sent).toBeGreaterThan(40);
  }, 300_000);
});
