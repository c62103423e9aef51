/**
 * The served OpenAPI document describes the jobs feature (202s, headers, callbacks, jobs paths),
 * and every jobs operation's real answers, success and error, validate against it with ajv (JSON
 * Schema 2020-12): the stateful paths test/contract leaves to this file.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";
import { JOB_OPERATIONS } from "../../jobs/job-operations.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let service: TestService;
let document: Json;

beforeAll(async () => {
  service = await startTestService();
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
