/**
 * The jobs API over real HTTP with real workers (Lanczos upscale, the builtin prompt engine) and
 * the real SQLite queue: Prefer handling, the job resource, listing, ownership, cancellation of
 * finished jobs, raw image answers and Idempotency-Key.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesOfDataUrl, dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { call, finishedJob, getJob, submitAsync, type JobBody } from "./job-helpers.js";

let service: TestService;
let key: string;
let otherKey: string;
let png: Buffer;

beforeAll(async () => {
  service = await startTestService({ ATELIER_JOB_MAX_WAIT_SECONDS: "30" });
  key = await service.createKey("jobs");
  otherKey = await service.createKey("other");
  png = await gradientPng(24, 16);
});
afterAll(async () => {
  await service.close();
});

type ImageBody = Record<string, unknown> & { data: { url: string; mimeType: string; width: number; height: number }[] };

describe("Prefer: respond-async", () => {
  it("answers 202 with Location, Preference-Applied and the queued job, which then succeeds with the synchronous body", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 3 }, key, { prefer: "respond-async" });
    expect(response.status).toBe(202);
    expect(response.headers.get("preference-applied")).toBe("respond-async");
    const job = (await response.json()) as JobBody;
    expect(response.headers.get("location")).toBe(`/api/v1/jobs/${job.id}`);
    expect(job).toMatchObject({ object: "job", operation: "tools/upscale" });
    expect(["queued", "running", "succeeded"]).toContain(job.status);
    expect(job.id).toMatch(/^job_[A-Za-z0-9_-]{16}$/);
    expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);

    const done = await finishedJob(service, key, job.id);
    expect(done.status).toBe("succeeded");
    expect(done.progress).toMatchObject({ fraction: 1, stage: "done" });
    expect(done.startedAt).not.toBeNull();
    expect(Date.parse(done.expiresAt!) - Date.parse(done.finishedAt!)).toBe(24 * 3_600_000);

    const sync = (await (await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 3 }, key)).json()) as ImageBody;
    const result = done.result as ImageBody;
    expect(result.id).toBe(response.headers.get("x-request-id"));
    const { id: _a, created: _b, ...syncRest } = sync;
    const { id: _c, created: _d, ...asyncRest } = result;
    expect(asyncRest).toEqual(syncRest);
  });

  it("validates the body at submission, exactly as the synchronous call does", async () => {
    const async = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 9 }, key, { prefer: "respond-async" });
    const sync = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 9 }, key);
    expect(async.status).toBe(400);
    const [a, s] = [(await async.json()) as { code: string; message: string }, (await sync.json()) as { code: string; message: string }];
    expect(a.code).toBe("INVALID_INPUT");
    expect(a.message).toBe(s.message);
  });

  it("refuses a missing key with 401 as the synchronous call does", async () => {
    const response = await service.post("/prompt/improve", { prompt: "a cat" }, undefined, { prefer: "respond-async" });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it("records a failed job's error body exactly as the synchronous error", async () => {
    // A catalogued style this service has not installed: only the worker finds that, once the job runs.
    const body = { imageUrl: dataUrl(png), style: "udnie" };
    const job = await submitAsync(service, "/tools/style-transfer", body, key);
    const done = await finishedJob(service, key, job.id);
    const sync = await service.post("/tools/style-transfer", body, key);
    const syncBody = (await sync.json()) as { code: string; message: string };
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({ code: syncBody.code, message: syncBody.message, status: sync.status });
    expect(done.result).toBeUndefined();
  });
});

describe("upscale jobs carry quality", () => {
  it("quality beside a model is refused before a job is made, with the synchronous error; quality alone runs", async () => {
    const refused = { imageUrl: dataUrl(png), scale: 2, model: "lanczos", quality: "max" };
    const asJob = await service.post("/tools/upscale", refused, key, { prefer: "respond-async" });
    const sync = await service.post("/tools/upscale", refused, key);
    const syncBody = (await sync.json()) as { code: string; message: string };
    expect(syncBody.message).toMatch(/quality chooses the model/);
    expect(asJob.status).toBe(sync.status);
    expect(await asJob.json()).toMatchObject({ code: syncBody.code, message: syncBody.message });
    const done = await finishedJob(service, key, (await submitAsync(service, "/tools/upscale", { imageUrl: dataUrl(png), scale: 2, quality: "fast" }, key)).id);
    expect(done.result).toMatchObject({ model: "lanczos", steps: ["lanczos3 x2"] });
  });
});

describe("Prefer: wait", () => {
  it("answers 200 with the normal body when the job finishes in time", async () => {
    const response = await service.post("/prompt/improve", { prompt: "a lighthouse at dusk" }, key, { prefer: "wait=20" });
    expect(response.status).toBe(200);
    expect(response.headers.get("preference-applied")).toBe("wait=20");
    const body = (await response.json()) as { improvedPrompt?: string; object?: string };
    expect(body.object).toBeUndefined();
    const sync = (await (await service.post("/prompt/improve", { prompt: "a lighthouse at dusk" }, key)).json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(Object.keys(sync).sort());
  });

  it("caps the wait at the configured maximum", async () => {
    const response = await service.post("/prompt/improve", { prompt: "a red kite" }, key, { prefer: "wait=999" });
    expect(response.status).toBe(200);
    expect(response.headers.get("preference-applied")).toBe("wait=30");
  });

  it("answers 202 with the job when the wait is over first", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 4 }, key, { prefer: "respond-async, wait=0" });
    expect(response.status).toBe(202);
    expect(response.headers.get("preference-applied")).toBe("respond-async, wait=0");
    const job = (await response.json()) as JobBody;
    expect(job.object).toBe("job");
    expect((await finishedJob(service, key, job.id)).status).toBe("succeeded");
  });
});

describe("without Prefer", () => {
  it("answers synchronously as before", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key);
    expect(response.status).toBe(200);
    expect(response.headers.get("preference-applied")).toBeNull();
    expect(((await response.json()) as ImageBody).data[0]!.width).toBe(48);
  });
});

describe("GET /api/v1/jobs/{id}", () => {
  it("is 404 for another key's job and for unknown ids", async () => {
    const job = await submitAsync(service, "/prompt/improve", { prompt: "a quiet harbour" }, key);
    const foreign = await call(service, "GET", `/jobs/${job.id}`, otherKey);
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { code: string }).code).toBe("NOT_FOUND");
    expect((await call(service, "DELETE", `/jobs/${job.id}`, otherKey)).status).toBe(404);
    expect((await call(service, "GET", `/jobs/${job.id}/result`, otherKey)).status).toBe(404);
    expect((await call(service, "GET", "/jobs/job_doesnotexist", key)).status).toBe(404);
    expect((await call(service, "GET", `/jobs/${job.id}`)).status).toBe(401);
  });
});

describe("GET /api/v1/jobs", () => {
  it("lists only the caller's jobs, newest first, with cursor pagination and a status filter", async () => {
    const listKey = await service.createKey("lister");
    const ids: string[] = [];
    for (const prompt of ["one", "two", "three", "four", "five"]) ids.push((await submitAsync(service, "/prompt/improve", { prompt: `a ${prompt} cat` }, listKey)).id);
    for (const id of ids) await finishedJob(service, listKey, id);
    await submitAsync(service, "/prompt/improve", { prompt: "someone else" }, otherKey);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const response = await call(service, "GET", `/jobs?limit=2${cursor ? `&cursor=${cursor}` : ""}`, listKey);
      expect(response.status).toBe(200);
      const page = (await response.json()) as { object: string; data: JobBody[]; hasMore: boolean; nextCursor: string | null };
      expect(page.object).toBe("list");
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((job) => job.id));
      cursor = page.nextCursor;
      expect(page.hasMore).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const succeeded = (await (await call(service, "GET", "/jobs?status=succeeded", listKey)).json()) as { data: JobBody[] };
    expect(succeeded.data).toHaveLength(5);
    const queued = (await (await call(service, "GET", "/jobs?status=queued", listKey)).json()) as { data: JobBody[] };
    expect(queued.data).toHaveLength(0);
    const bad = await call(service, "GET", "/jobs?status=done", listKey);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/queued, running, succeeded, failed, canceled/);
  });
});

describe("DELETE /api/v1/jobs/{id}", () => {
  it("is 409 once the job has finished", async () => {
    const job = await submitAsync(service, "/prompt/improve", { prompt: "a small boat" }, key);
    await finishedJob(service, key, job.id);
    const response = await call(service, "DELETE", `/jobs/${job.id}`, key);
    expect(response.status).toBe(409);
    expect(((await response.json()) as { code: string }).code).toBe("JOB_CONFLICT");
  });
});

describe("raw image results", () => {
  it("GET /jobs/{id}/result answers the image bytes, identical to the decoded data URL", async () => {
    const job = await submitAsync(service, "/tools/upscale", { imageUrl: dataUrl(png), scale: 2, outputFormat: "webp" }, key);
    const done = await finishedJob(service, key, job.id);
    const response = await call(service, "GET", `/jobs/${job.id}/result`, key);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/webp");
    expect(response.headers.get("x-atelier-width")).toBe("48");
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.equals(bytesOfDataUrl((done.result as ImageBody).data[0]!.url))).toBe(true);
  });

  it("a synchronous call with Accept: image/png answers the same bytes as the data URL, metadata in headers", async () => {
    const json = (await (await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 3 }, key)).json()) as ImageBody;
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 3 }, key, { accept: "image/png" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("x-atelier-model")).toBe("lanczos");
    expect(response.headers.get("x-atelier-scale")).toBe("3");
    expect(response.headers.get("x-atelier-steps")).toBe("lanczos3 x3");
    expect([response.headers.get("x-atelier-width"), response.headers.get("x-atelier-height")]).toEqual(["72", "48"]);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.equals(bytesOfDataUrl(json.data[0]!.url))).toBe(true);
  });

  it("Accept chooses the encoding when outputFormat is absent, and conflicts are 406", async () => {
    const jpeg = await service.post("/tools/upscale", { imageUrl: dataUrl(png) }, key, { accept: "image/jpeg" });
    expect(jpeg.headers.get("content-type")).toBe("image/jpeg");
    expect((await sharp(Buffer.from(await jpeg.arrayBuffer())).metadata()).format).toBe("jpeg");
    const conflict = await service.post("/tools/upscale", { imageUrl: dataUrl(png), outputFormat: "png" }, key, { accept: "image/webp" });
    expect(conflict.status).toBe(406);
    expect(((await conflict.json()) as { code: string }).code).toBe("NOT_ACCEPTABLE");
    const json = await service.post("/tools/upscale", { imageUrl: dataUrl(png) }, key, { accept: "application/json, image/png;q=0.5" });
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    const errors = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 99 }, key, { accept: "image/png" });
    expect(errors.status).toBe(400);
    expect(errors.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it("Accept: image/png with Prefer: wait answers the raw bytes once done", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key, { accept: "image/png", prefer: "wait=20" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect((await sharp(Buffer.from(await response.arrayBuffer())).metadata()).width).toBe(48);
  });
});

describe("Idempotency-Key", () => {
  const remaining = (response: Response) => Number(response.headers.get("x-ratelimit-remaining"));

  it("the same key and body returns the same job without charging again", async () => {
    const headers = { prefer: "respond-async", "idempotency-key": "retry-1" };
    const first = await service.post("/prompt/improve", { prompt: "a windmill" }, key, headers);
    expect(first.status).toBe(202);
    const job = (await first.json()) as JobBody;
    await finishedJob(service, key, job.id);
    const again = await service.post("/prompt/improve", { prompt: "a windmill" }, key, headers);
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as JobBody).id).toBe(job.id);
    expect(again.headers.get("x-ratelimit-remaining")).toBeNull();
    const probe = await service.post("/prompt/improve", { prompt: "a probe" }, key);
    expect(remaining(probe)).toBe(remaining(first) - 1);
  });

  it("a synchronous retry gets the same response body", async () => {
    const headers = { "idempotency-key": "sync-1" };
    const first = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key, headers);
    expect(first.status).toBe(200);
    const body = await first.json();
    const again = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key, headers);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
  });

  it("the same key with a different body is 422", async () => {
    const headers = { prefer: "respond-async", "idempotency-key": "retry-2" };
    expect((await service.post("/prompt/improve", { prompt: "a lake" }, key, headers)).status).toBe(202);
    const response = await service.post("/prompt/improve", { prompt: "a river" }, key, headers);
    expect(response.status).toBe(422);
    expect(((await response.json()) as { code: string }).code).toBe("IDEMPOTENCY_MISMATCH");
  });

  it("a synchronous duplicate while the first is in flight is 409", async () => {
    const big = dataUrl(await gradientPng(240, 160));
    const headers = { "idempotency-key": "in-flight-1" };
    const first = service.post("/tools/upscale", { imageUrl: big, scale: 4 }, key, headers);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = await service.post("/tools/upscale", { imageUrl: big, scale: 4 }, key, headers);
    expect(second.status).toBe(409);
    expect(((await second.json()) as { code: string }).code).toBe("JOB_CONFLICT");
    expect(second.headers.get("retry-after")).toBe("1");
    expect((await first).status).toBe(200);
  });

  it("keys are scoped per API key", async () => {
    const headers = { prefer: "respond-async", "idempotency-key": "shared-name" };
    const mine = (await (await service.post("/prompt/improve", { prompt: "a fox" }, key, headers)).json()) as JobBody;
    const theirs = (await (await service.post("/prompt/improve", { prompt: "a fox" }, otherKey, headers)).json()) as JobBody;
    expect(theirs.id).not.toBe(mine.id);
    expect((await getJob(service, otherKey, theirs.id)).id).toBe(theirs.id);
  });

  it("refuses a malformed key with 400", async () => {
    const response = await service.post("/prompt/improve", { prompt: "a fox" }, key, { "idempotency-key": "" });
    expect(response.status).toBe(400);
  });
});

describe("retention", () => {
  it("purges results after their retention, keeping the record; /result is then 410", async () => {
    const job = await submitAsync(service, "/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key);
    const done = await finishedJob(service, key, job.id);
    expect(done.result).toBeDefined();
    const { store } = service.jobs.service;
    // As the purge timer (every minute) would once the retention period is over.
    const purged = await store.purge(Date.parse(done.expiresAt!) + 1, 0, 0);
    expect(purged.results).toBeGreaterThanOrEqual(1);
    const after = await getJob(service, key, job.id);
    expect(after.status).toBe("succeeded");
    expect(after.result).toBeUndefined();
    const gone = await call(service, "GET", `/jobs/${job.id}/result`, key);
    expect(gone.status).toBe(410);
    expect(((await gone.json()) as { code: string }).code).toBe("RESULT_GONE");
  });
});

describe("key scopes", () => {
  it("a job is refused (403) for an operation outside the key's scopes, as the synchronous call is", async () => {
    const scoped = (await service.services.keys.create({ name: "scoped", scopes: ["prompt.improve"] })).key;
    const refused = await service.post("/tools/upscale", { imageUrl: dataUrl(png) }, scoped, { prefer: "respond-async" });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe("KEY_SCOPE_DENIED");
    expect((await service.post("/prompt/improve", { prompt: "a gull" }, scoped, { prefer: "respond-async" })).status).toBe(202);
    // Looking at one's own jobs needs no particular scope.
    expect((await call(service, "GET", "/jobs", scoped)).status).toBe(200);
  });
});
