/**
 * Work that cannot succeed is refused before a job exists, over real HTTP: an upscale whose result
 * is over the output pixel limit, an unknown model, options that do not go together and an image
 * that is not one answer as the synchronous call does (same status, same body), with no job made
 * and nothing charged; the message names the largest scale that fits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { call, finishedJob, type JobBody } from "./job-helpers.js";

let service: TestService;
let image400x300: string;
let image800x700: string;

beforeAll(async () => {
  // 1 MP: a 400x300 image fits x2 (0.48 MP) but not x3 (1.08 MP); an 800x700 one fits no scale.
  service = await startTestService({ ATELIER_MAX_OUTPUT_PIXELS: "1000000" });
  image400x300 = dataUrl(await gradientPng(400, 300));
  image800x700 = dataUrl(await gradientPng(800, 700));
});
afterAll(async () => {
  await service?.close();
});

interface ErrorBody {
  code: string;
  message: string;
  requestId: string;
  issues?: unknown;
}

/** The synchronous answer and the job submission's answer to the same body, with a fresh key each. */
async function bothWays(body: unknown): Promise<{ sync: { status: number; body: ErrorBody }; job: { status: number; body: ErrorBody }; jobKey: string }> {
  const syncAnswer = await service.post("/tools/upscale", body, await service.createKey("sync"));
  const jobKey = await service.createKey("job", 10);
  const jobAnswer = await service.post("/tools/upscale", body, jobKey, { prefer: "respond-async" });
  return {
    sync: { status: syncAnswer.status, body: (await syncAnswer.json()) as ErrorBody },
    job: { status: jobAnswer.status, body: (await jobAnswer.json()) as ErrorBody },
    jobKey,
  };
}

const withoutRequestId = ({ requestId: _requestId, ...rest }: ErrorBody) => rest;

async function jobsOf(key: string): Promise<JobBody[]> {
  const response = await call(service, "GET", "/jobs", key);
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: JobBody[] }).data;
}

describe("a job that cannot succeed", () => {
  it("an upscale over the output limit answers 413 before any job exists, naming the largest scale that fits, and charges nothing", async () => {
    const { sync, job, jobKey } = await bothWays({ imageUrl: image400x300, scale: 3, model: "lanczos" });
    expect(sync.status).toBe(413);
    expect(sync.body.code).toBe("OUTPUT_TOO_LARGE");
    expect(sync.body.message).toContain("the largest scale that fits this 400x300 image is 2");
    expect(sync.body.message).toMatch(/1200x900 \(1\.1 MP\), over this server's limit of 1\.0 MP \(ATELIER_MAX_OUTPUT_PIXELS\)/);
    expect(job.status).toBe(413);
    expect(withoutRequestId(job.body)).toEqual(withoutRequestId(sync.body));
    expect(await jobsOf(jobKey)).toEqual([]);

    // The key's whole allowance is left: the refused job took none of it.
    const accepted = await service.post("/tools/upscale", { imageUrl: image400x300, scale: 2, model: "lanczos" }, jobKey, { prefer: "respond-async" });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get("x-ratelimit-remaining")).toBe("9");
    const done = await finishedJob(service, jobKey, ((await accepted.json()) as JobBody).id);
    expect(done.status).toBe("succeeded");
    expect((await jobsOf(jobKey)).map((listed) => listed.id)).toEqual([done.id]);
  });

  it("says when no scale fits the image at all, on both paths", async () => {
    const { sync, job, jobKey } = await bothWays({ imageUrl: image800x700, scale: 2 });
    expect(sync.status).toBe(413);
    expect(sync.body.message).toContain("No scale fits this 800x700 image (the smallest is 2); use a smaller image.");
    expect(job.status).toBe(413);
    expect(withoutRequestId(job.body)).toEqual(withoutRequestId(sync.body));
    expect(await jobsOf(jobKey)).toEqual([]);
  });

  it.each([
    ["an unknown model", { imageUrl: "IMAGE", scale: 2, model: "no-such-upscaler" }, 400, "INVALID_INPUT"],
    ["quality beside model", { imageUrl: "IMAGE", scale: 2, model: "lanczos", quality: "fast" }, 400, "INVALID_INPUT"],
    ["bytes that are not an image", { imageUrl: `data:image/png;base64,${Buffer.from("not an image at all").toString("base64")}`, scale: 2 }, 422, "IMAGE_UNDECODABLE"],
  ] as const)("%s answers as the synchronous call does, before any job exists", async (_name, template, status, code) => {
    const body = { ...template, imageUrl: template.imageUrl === "IMAGE" ? image400x300 : template.imageUrl };
    const { sync, job, jobKey } = await bothWays(body);
    expect([sync.status, sync.body.code]).toEqual([status, code]);
    expect(job.status).toBe(status);
    expect(withoutRequestId(job.body)).toEqual(withoutRequestId(sync.body));
    expect(await jobsOf(jobKey)).toEqual([]);
  });

  it("an Idempotency-Key of a refused request stays free for the corrected one", async () => {
    const key = await service.createKey("retry");
    const headers = { prefer: "respond-async", "idempotency-key": "precheck-retry-1" };
    const refused = await service.post("/tools/upscale", { imageUrl: image400x300, scale: 3, model: "lanczos" }, key, headers);
    expect(refused.status).toBe(413);
    const corrected = await service.post("/tools/upscale", { imageUrl: image400x300, scale: 2, model: "lanczos" }, key, headers);
    expect(corrected.status).toBe(202);
    expect(corrected.headers.get("idempotent-replayed")).toBeNull();
    await finishedJob(service, key, ((await corrected.json()) as JobBody).id);
  });
});
