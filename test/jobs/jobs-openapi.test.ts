/**
 * The served OpenAPI document describes the jobs feature (202s, headers, callbacks, jobs paths),
 * and every jobs operation's real answers, success and error, validate against it with ajv (JSON
 * Schema 2020-12): the stateful paths test/contract leaves to this file. The document and the jobs
 * routes' checks must not drift apart either: every bound and enum the document gives a jobs
 * parameter (or `webhookUrl`) is the one the service enforces, and what the event stream and the
 * webhooks send matches the schemas the document gives them.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";
import { JOB_OPERATIONS } from "../../jobs/job-operations.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let service: TestService;
let document: Json;

beforeAll(async () => {
  // Webhooks to a receiver on loopback are allowed, so that a delivery can be checked against the callback.
  service = await startTestService({ ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1" });
  document = (await (await fetch(`${service.url}/api/v1/openapi.json`)).json()) as Json;
});
afterAll(async () => {
  await service.close();
});

describe("OpenAPI document: jobs", () => {
  it("gives every POST operation Prefer and Idempotency-Key, a 202 with Location, and the webhook callback", () => {
    expect(JOB_OPERATIONS.size).toBeGreaterThanOrEqual(5);
    for (const operation of JOB_OPERATIONS.values()) {
      const post = document.paths[`/api${operation.restPath}`].post as Json;
      const headers = (post.parameters as Json[]).filter((parameter) => parameter.in === "header").map((parameter) => parameter.name);
      expect(headers).toEqual(expect.arrayContaining(["Prefer", "Idempotency-Key"]));
      expect(post.responses["202"].headers).toHaveProperty("Location");
      expect(post.responses["202"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Job" });
      expect(post.requestBody.content["application/json"].schema.properties).toHaveProperty("webhookUrl");
      expect(Object.keys(post.callbacks.jobFinished)).toEqual(["{$request.body#/webhookUrl}"]);
      if (operation.returnsImages) expect(Object.keys(post.responses["200"].content)).toEqual(expect.arrayContaining(["image/png", "image/jpeg", "image/webp"]));
    }
  });

  it("documents the jobs and webhook-secret paths with their methods", () => {
    expect(Object.keys(document.paths["/api/v1/jobs"])).toEqual(["get"]);
    expect(Object.keys(document.paths["/api/v1/jobs/{id}"]).sort()).toEqual(["delete", "get"]);
    expect(Object.keys(document.paths["/api/v1/jobs/{id}/result"])).toEqual(["get"]);
    expect(Object.keys(document.paths["/api/v1/jobs/{id}/events"].get.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(Object.keys(document.paths["/api/v1/webhooks/secret"]).sort()).toEqual(["get", "post"]);
    for (const name of ["Job", "JobList", "WebhookEvent", "WebhookSecret"]) expect(document.components.schemas).toHaveProperty(name);
  });

  it("describes every field a real job carries", async () => {
    const key = await service.createKey("doc");
    const response = await service.post("/prompt/improve", { prompt: "a heron" }, key, { prefer: "respond-async" });
    const job = (await response.json()) as Json;
    const properties = Object.keys(document.components.schemas.Job.properties);
    for (const field of Object.keys(job)) expect(properties).toContain(field);
  });
});

const ajv = new Ajv2020({ allErrors: true, strict: false });

function resolve(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolve);
  if (value === null || typeof value !== "object") return value;
  const ref = (value as { $ref?: string }).$ref;
  if (ref) return resolve(ref.replace(/^#\//, "").split("/").reduce<unknown>((node, key) => (node as Json)[key], document));
  return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, resolve(inner)]));
}

/** Validates a JSON answer against the documented response of its status. */
async function expectDocumented(path: string, method: string, response: Response): Promise<Json> {
  const documented = document.paths[path][method].responses[String(response.status)];
  expect(documented, `${method} ${path}: status ${response.status} documented`).toBeDefined();
  const body = (await response.json()) as Json;
  const check = ajv.compile(resolve(documented.content["application/json"].schema) as object);
  expect(check(body) ? [] : check.errors, `${method} ${path} ${response.status}`).toEqual([]);
  return body;
}

describe("jobs operations answer as documented", () => {
  it("validates success and error answers of every jobs path against the document", async () => {
    const key = await service.createKey("walk");
    const auth = { authorization: `Bearer ${key}` };
    const api = (path: string, init: RequestInit = {}) => fetch(`${service.url}/api${path}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });

    const accepted = await service.post("/prompt/improve", { prompt: "a heron" }, key, { prefer: "respond-async" });
    expect(accepted.status).toBe(202);
    const job = await expectDocumented("/api/v1/prompt/improve", "post", accepted);
    let done: Json;
    do done = await expectDocumented("/api/v1/jobs/{id}", "get", await api(`/v1/jobs/${job.id}`));
    while (done.status !== "succeeded");
    await expectDocumented("/api/v1/jobs", "get", await api("/v1/jobs?limit=1"));
    await expectDocumented("/api/v1/jobs", "get", await api("/v1/jobs?limit=0"));
    await expectDocumented("/api/v1/jobs/{id}", "get", await api("/v1/jobs/job_unknown"));
    await expectDocumented("/api/v1/jobs/{id}", "get", await fetch(`${service.url}/api/v1/jobs/${job.id}`));
    await expectDocumented("/api/v1/jobs/{id}", "delete", await api(`/v1/jobs/${job.id}`, { method: "DELETE" }));
    const result = await api(`/v1/jobs/${job.id}/result`);
    expect(result.status).toBe(200);
    await expectDocumented("/api/v1/jobs/{id}/result", "get", result);
    await expectDocumented("/api/v1/webhooks/secret", "get", await api("/v1/webhooks/secret"));
    await expectDocumented("/api/v1/webhooks/secret", "post", await api("/v1/webhooks/secret", { method: "POST" }));

    const headers = { prefer: "respond-async", "idempotency-key": "walk-1" };
    await service.post("/prompt/improve", { prompt: "one" }, key, headers);
    const mismatch = await service.post("/prompt/improve", { prompt: "two" }, key, headers);
    expect(((await expectDocumented("/api/v1/prompt/improve", "post", mismatch)) as { code: string }).code).toBe("IDEMPOTENCY_MISMATCH");

    const events = await api(`/v1/jobs/${job.id}/events`);
    expect(Object.keys(document.paths["/api/v1/jobs/{id}/events"].get.responses["200"].content)).toContain(events.headers.get("content-type")!.split(";")[0]);
    await events.text();
  });
});

type Schema = { enum?: unknown[]; type?: string | string[]; minimum?: number; maximum?: number; maxLength?: number; format?: string };

/** Values a parameter's documented schema allows at its edges, and values just past them. */
function edgesOf(schema: Schema): { allowed: string[]; refused: string[] } {
  const allowed: string[] = [];
  const refused: string[] = [];
  if (schema.enum) {
    allowed.push(...schema.enum.map(String));
    refused.push(`not-${String(schema.enum[0])}`);
  }
  if (schema.type === "integer") {
    refused.push("1.5", "many");
    if (schema.minimum !== undefined) allowed.push(String(schema.minimum)) && refused.push(String(schema.minimum - 1));
    if (schema.maximum !== undefined) allowed.push(String(schema.maximum)) && refused.push(String(schema.maximum + 1));
  }
  if (schema.maxLength !== undefined) refused.push("x".repeat(schema.maxLength + 1));
  return { allowed, refused };
}

/** The events of a finished job's stream: `event` and parsed `data` of each. */
function parseEvents(text: string): { type: string; data: unknown }[] {
  return text
    .split("\n\n")
    .map((block) => Object.fromEntries(block.split("\n").flatMap((line) => (/^(event|data): /.test(line) ? [[line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]] : []))))
    .filter((fields) => fields.event !== undefined)
    .map((fields) => ({ type: fields.event!, data: JSON.parse(fields.data!) }));
}

function expectValid(schema: unknown, value: unknown, what: string): void {
  const check = ajv.compile(resolve(schema) as object);
  expect(check(value) ? [] : check.errors, what).toEqual([]);
}

describe("the document and the jobs routes' checks agree", () => {
  it("every documented query parameter's enum and bounds are the ones the service enforces, and no other parameter is taken", async () => {
    const key = await service.createKey("edges");
    const accepted = await service.post("/prompt/improve", { prompt: "a heron" }, key, { prefer: "respond-async" });
    const job = (await accepted.json()) as Json;
    await jobSettled(key, job.id as string);
    const get = (path: string) => fetch(`${service.url}/api${path}`, { headers: { authorization: `Bearer ${key}` } });
    const paths = { "/api/v1/jobs": "/v1/jobs", "/api/v1/jobs/{id}/events": `/v1/jobs/${job.id}/events` };
    let checked = 0;
    for (const [documented, path] of Object.entries(paths)) {
      const query = (document.paths[documented].get.parameters as Json[]).filter((parameter) => parameter.in === "query");
      expect(query.length, documented).toBeGreaterThan(0);
      for (const parameter of query) {
        const { allowed, refused } = edgesOf(parameter.schema as Schema);
        expect(allowed.length + refused.length, `${documented} ${parameter.name}: a documented bound or enum`).toBeGreaterThan(0);
        for (const value of allowed) {
          const response = await get(`${path}?${parameter.name}=${encodeURIComponent(value)}`);
          expect(response.status, `${documented} ${parameter.name}=${value}`).toBe(200);
          await response.text();
          checked += 1;
        }
        for (const value of refused) {
          const response = await get(`${path}?${parameter.name}=${encodeURIComponent(value)}`);
          expect(response.status, `${documented} ${parameter.name}=${value.slice(0, 20)}`).toBe(400);
          expect(((await expectDocumented(documented, "get", response)) as { code: string }).code).toBe("INVALID_INPUT");
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
    // The list takes exactly the documented parameters.
    expect((await get("/v1/jobs?sort=newest")).status).toBe(400);
  });

  it("a webhookUrl past the documented length or not an http(s) URL is refused before a job is made", async () => {
    const key = await service.createKey("webhook-url");
    const post = document.paths["/api/v1/prompt/improve"].post as Json;
    const webhookUrl = post.requestBody.content["application/json"].schema.properties.webhookUrl as Schema;
    expect(webhookUrl.format).toBe("uri");
    const long = `http://127.0.0.1/${"x".repeat(webhookUrl.maxLength! - "http://127.0.0.1/".length + 1)}`;
    for (const url of [long, "ftp://127.0.0.1/hooks", "not a url"]) {
      const response = await service.post("/prompt/improve", { prompt: "a heron", webhookUrl: url }, key);
      expect(response.status, url.slice(0, 30)).toBe(400);
      expect(((await expectDocumented("/api/v1/prompt/improve", "post", response)) as { code: string }).code).toBe("INVALID_INPUT");
    }
    const list = (await (await fetch(`${service.url}/api/v1/jobs`, { headers: { authorization: `Bearer ${key}` } })).json()) as Json;
    expect(list.data).toEqual([]);
  });

  it("every event the stream sends, with and without the result, matches the schema documented for its kind", async () => {
    const key = await service.createKey("events");
    const job = (await (await service.post("/prompt/improve", { prompt: "a heron" }, key, { prefer: "respond-async" })).json()) as Json;
    await jobSettled(key, job.id as string);
    const media = document.paths["/api/v1/jobs/{id}/events"].get.responses["200"].content["text/event-stream"] as Json;
    const schemas = media["x-event-data"] as Record<string, unknown>;
    expect(Object.keys(schemas).sort()).toEqual(["error", "progress", "result", "status"]);
    const seen = new Set<string>();
    for (const query of ["", "?include=result"]) {
      const response = await fetch(`${service.url}/api/v1/jobs/${job.id}/events${query}`, { headers: { authorization: `Bearer ${key}` } });
      const events = parseEvents(await response.text());
      expect(events.map((event) => event.type)).toContain("result");
      for (const event of events) {
        expect(schemas, `event ${event.type} documented`).toHaveProperty(event.type);
        expectValid(schemas[event.type], event.data, `${event.type} event${query}`);
        seen.add(event.type);
      }
    }
    expect([...seen].sort()).toEqual(["result", "status"]);
    // A job that fails (no model is installed to generate with) ends its stream with its error.
    const failing = (await (await service.post("/generate", { prompt: "a heron" }, key, { prefer: "respond-async" })).json()) as Json;
    expect(failing.object).toBe("job");
    await jobSettled(key, failing.id as string);
    const events = parseEvents(await (await fetch(`${service.url}/api/v1/jobs/${failing.id}/events`, { headers: { authorization: `Bearer ${key}` } })).text());
    const error = events.find((event) => event.type === "error");
    expect(error, "an error event").toBeDefined();
    expectValid(schemas.error, error!.data, "error event");
    expect((error!.data as Json).code).toBe("MODEL_NOT_INSTALLED");
  });

  it("a webhook delivery's body and signature headers match the documented callback", async () => {
    const received: { body: string; headers: http.IncomingHttpHeaders }[] = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
        res.end("ok");
      });
    });
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    try {
      const key = await service.createKey("webhook");
      const { port } = receiver.address() as AddressInfo;
      const accepted = await service.post("/prompt/improve", { prompt: "a heron", webhookUrl: `http://127.0.0.1:${port}/hooks` }, key);
      expect(accepted.status).toBe(202);
      const deadline = Date.now() + 60_000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
      expect(received).toHaveLength(1);
      const callback = (document.paths["/api/v1/prompt/improve"].post as Json).callbacks.jobFinished["{$request.body#/webhookUrl}"].post as Json;
      expectValid(callback.requestBody.content["application/json"].schema, JSON.parse(received[0]!.body), "webhook body");
      const headers = (callback.parameters as Json[]).filter((parameter) => parameter.in === "header");
      expect(headers.map((parameter) => parameter.name).sort()).toEqual(["webhook-id", "webhook-signature", "webhook-timestamp"]);
      for (const parameter of headers) {
        const value = received[0]!.headers[(parameter.name as string).toLowerCase()];
        if (parameter.required) expect(value, parameter.name).toBeDefined();
        expectValid(parameter.schema, value, `header ${parameter.name}`);
      }
    } finally {
      await new Promise<void>((done) => receiver.close(() => done()));
    }
  });
});

/** Waits until the key's job has finished. */
async function jobSettled(key: string, id: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = (await (await fetch(`${service.url}/api/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Json;
    if (["succeeded", "failed", "canceled"].includes(job.status as string)) return;
    expect(Date.now(), `job ${id} finishes`).toBeLessThan(deadline);
    await new Promise((done) => setTimeout(done, 50));
  }
}
