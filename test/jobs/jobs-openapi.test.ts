/** The served OpenAPI document describes the jobs feature: 202s, headers, callbacks, jobs paths. */
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
      const post = document.paths[operation.restPath].post as Json;
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
    expect(Object.keys(document.paths["/v1/jobs"])).toEqual(["get"]);
    expect(Object.keys(document.paths["/v1/jobs/{id}"]).sort()).toEqual(["delete", "get"]);
    expect(Object.keys(document.paths["/v1/jobs/{id}/result"])).toEqual(["get"]);
    expect(Object.keys(document.paths["/v1/jobs/{id}/events"].get.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(Object.keys(document.paths["/v1/webhooks/secret"]).sort()).toEqual(["get", "post"]);
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
