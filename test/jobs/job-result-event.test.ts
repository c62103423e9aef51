/**
 * A job's event stream says where the result is instead of pouring it out: the `result` event is a
 * few links, which lead to the result; with `?include=result` it carries the whole result too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { call, finishedJob, readEvents, submitAsync, type JobBody } from "./job-helpers.js";

let service: TestService;
let key: string;
let job: JobBody;

beforeAll(async () => {
  service = await startTestService();
  key = await service.createKey("events");
  // An upscale whose result's data URL is well over 100 kB.
  const submitted = await submitAsync(service, "/tools/upscale", { imageUrl: dataUrl(await gradientPng(300, 200)), scale: 4, model: "lanczos" }, key);
  job = await finishedJob(service, key, submitted.id);
  expect(job.status).toBe("succeeded");
  expect(JSON.stringify(job.result).length).toBeGreaterThan(100_000);
});
afterAll(async () => {
  await service?.close();
});

describe("the result event", () => {
  it("is small and carries the job's and the result's links, which lead to the result", async () => {
    const response = await call(service, "GET", `/jobs/${job.id}/events`, key);
    expect(response.status).toBe(200);
    const text = await response.clone().text();
    expect(text.length).toBeLessThan(2_000);
    const events = await readEvents(response);
    expect(events.map((event) => event.event)).toEqual(["status", "status", "status", "result"]);
    const links = { status: "succeeded", jobUrl: `/api/v1/jobs/${job.id}`, resultUrl: `/api/v1/jobs/${job.id}/result` };
    expect(events.at(-1)!.data).toEqual(links);

    const origin = new URL(service.url).origin;
    const viaJob = (await (await fetch(`${origin}${links.jobUrl}`, { headers: { authorization: `Bearer ${key}` } })).json()) as JobBody;
    expect(viaJob.result).toEqual(job.result);
    const viaResult = await fetch(`${origin}${links.resultUrl}`, { headers: { authorization: `Bearer ${key}` } });
    expect(viaResult.headers.get("content-type")).toBe("image/png");
    const url = job.result!.data![0]!.url;
    expect(Buffer.from(await viaResult.arrayBuffer()).equals(Buffer.from(url.slice(url.indexOf(",") + 1), "base64"))).toBe(true);
  });

  it("carries the whole result with ?include=result, also on resuming", async () => {
    const links = { status: "succeeded", jobUrl: `/api/v1/jobs/${job.id}`, resultUrl: `/api/v1/jobs/${job.id}/result` };
    const events = await readEvents(await call(service, "GET", `/jobs/${job.id}/events?include=result`, key));
    expect(events.at(-1)).toMatchObject({ event: "result", data: { ...links, result: job.result } });
    const resumed = await readEvents(await call(service, "GET", `/jobs/${job.id}/events?include=result`, key, { "last-event-id": String(events.at(-2)!.id) }));
    expect(resumed).toEqual([events.at(-1)]);
  });

  it("answers 400 for an include it does not know", async () => {
    const response = await call(service, "GET", `/jobs/${job.id}/events?include=everything`, key);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("Expected result for include") });
  });
});
