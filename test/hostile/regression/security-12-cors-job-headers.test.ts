/**
 * With ATELIER_CORS_ORIGINS set, a browser page on a listed origin could not use the jobs API: the
 * preflight refused `Prefer`, `Idempotency-Key` and `Last-Event-ID`, DELETE (cancel) was not
 * allowed, and `Location`, `Preference-Applied` and `Idempotent-Replayed` were hidden from it. CORS
 * now lets a page send and read every header the API documents (core/api-headers.ts). A real
 * Chromium on a page served from a second loopback origin calls the API as a browser client would;
 * the same calls from an origin not listed fail, so the browser does enforce CORS here.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../console/support/console-browser.js";
import { dataUrl, gradientPng } from "../../support/test-images.js";
import { startTestService, type TestService } from "../../support/test-service.js";

/** A blank page on its own loopback origin: scripts evaluated in it fetch the API cross-origin. */
async function startPageServer(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><title>API client</title>"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  body: string;
}

/** What a page script sees of one cross-origin call: status, the named headers (null when hidden) and the body. */
type Call = (request: { url: string; method?: string; headers?: Record<string, string>; body?: string; read: string[] }) => Promise<Answer>;

function caller(page: Page): Call {
  // Runs in the page: a plain fetch, as a browser client makes it.
  return (request) =>
    page.evaluate(async ({ url, method, headers, body, read }) => {
      const response = await fetch(url, { method: method ?? "GET", headers, body });
      return { status: response.status, headers: Object.fromEntries(read.map((name) => [name, response.headers.get(name)])), body: await response.text() };
    }, request);
}

let service: TestService;
let listed: { origin: string; close: () => Promise<void> };
let unlisted: { origin: string; close: () => Promise<void> };
let browser: Browser;
let call: Call;
let callFromUnlisted: Call;
let key: string;
let imageUrl: string;
/** A finished upscale job of `key`, submitted from Node: what the page follows and reads. */
let finished: string;

async function finishedJobLocation(): Promise<string> {
  const accepted = await service.post("/tools/upscale", { imageUrl, scale: 3 }, key, { prefer: "respond-async" });
  const location = accepted.headers.get("location");
  if (accepted.status !== 202 || !location) throw new Error(`submit: ${accepted.status} ${await accepted.text()}`);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const job = (await (await fetch(`${service.url}${location}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string };
    if (job.status === "succeeded") return location;
    if (job.status !== "queued" && job.status !== "running") throw new Error(`job ${location} ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${location} did not finish`);
}

beforeAll(async () => {
  listed = await startPageServer();
  unlisted = await startPageServer();
  service = await startTestService({ ATELIER_CORS_ORIGINS: listed.origin });
  key = await service.createKey("browser app");
  imageUrl = dataUrl(await gradientPng(16, 12));
  finished = await finishedJobLocation();
  browser = await launchChromium();
  const page = await browser.newPage();
  await page.goto(listed.origin);
  call = caller(page);
  const other = await browser.newPage();
  await other.goto(unlisted.origin);
  callFromUnlisted = caller(other);
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
  await listed?.close();
  await unlisted?.close();
});

const RATE_LIMIT_HEADERS = ["RateLimit", "RateLimit-Policy", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

describe("a browser page on a listed origin uses the jobs API", () => {
  it("submits a job with Prefer and Idempotency-Key and reads Location, Preference-Applied, the rate-limit headers and a replay", async () => {
    const submit = () =>
      call({
        url: `${service.url}/api/v1/tools/upscale`,
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", prefer: "respond-async", "idempotency-key": "browser-job-1" },
        body: JSON.stringify({ imageUrl, scale: 3 }),
        read: ["Location", "Preference-Applied", "Idempotent-Replayed", "X-Request-Id", ...RATE_LIMIT_HEADERS],
      });
    const accepted = await submit();
    expect(accepted.status).toBe(202);
    const job = JSON.parse(accepted.body) as { id: string };
    expect(accepted.headers.Location).toBe(`/api/v1/jobs/${job.id}`);
    expect(accepted.headers["Preference-Applied"]).toBe("respond-async");
    expect(accepted.headers["X-Request-Id"]).toMatch(/^req_/);
    for (const name of RATE_LIMIT_HEADERS) expect(accepted.headers[name], name).toBeTruthy();
    expect(accepted.headers["X-RateLimit-Remaining"]).toMatch(/^\d+$/);

    const replayed = await submit();
    expect(replayed.status).toBe(202);
    expect(replayed.headers["Idempotent-Replayed"]).toBe("true");
    expect(replayed.headers.Location).toBe(accepted.headers.Location);
  });

  it("follows the job's events, resuming with Last-Event-ID", async () => {
    const auth = { authorization: `Bearer ${key}` };
    const all = await call({ url: `${service.url}${finished}/events`, headers: auth, read: [] });
    expect(all.status).toBe(200);
    expect(all.body).toMatch(/^id: 1$/m);
    expect(all.body).toContain("event: result");
    const resumed = await call({ url: `${service.url}${finished}/events`, headers: { ...auth, "last-event-id": "1" }, read: [] });
    expect(resumed.status).toBe(200);
    expect(resumed.body).not.toMatch(/^id: 1$/m);
    expect(resumed.body).toContain("event: result");
  });

  it("reads the raw result's X-Atelier-* headers and gets DELETE's answer on a finished job", async () => {
    const auth = { authorization: `Bearer ${key}` };
    const result = await call({ url: `${service.url}${finished}/result`, headers: auth, read: ["Content-Type", "X-Atelier-Width", "X-Atelier-Height", "X-Atelier-Model"] });
    expect(result.status).toBe(200);
    expect(result.headers).toMatchObject({ "Content-Type": "image/png", "X-Atelier-Width": "48", "X-Atelier-Height": "36" });
    expect(result.headers["X-Atelier-Model"]).toBeTruthy();
    const cancel = await call({ url: `${service.url}${finished}`, method: "DELETE", headers: auth, read: [] });
    expect(cancel.status).toBe(409);
    expect(JSON.parse(cancel.body)).toMatchObject({ code: "JOB_CONFLICT" });
  });

  it("reads Retry-After when the key's quota is spent", async () => {
    const spent = await service.createKey("spent", 1);
    const upscale = () =>
      call({
        url: `${service.url}/api/v1/tools/upscale`,
        method: "POST",
        headers: { authorization: `Bearer ${spent}`, "content-type": "application/json" },
        body: JSON.stringify({ imageUrl, scale: 3 }),
        read: ["Retry-After", "X-RateLimit-Remaining"],
      });
    expect((await upscale()).status).toBe(200);
    const refused = await upscale();
    expect(refused.status).toBe(429);
    expect(refused.headers["Retry-After"]).toMatch(/^\d+$/);
    expect(refused.headers["X-RateLimit-Remaining"]).toBe("0");
  });

  it("fails the same calls from an origin that is not listed (the browser enforces CORS)", async () => {
    await expect(callFromUnlisted({ url: `${service.url}/api/v1/jobs`, headers: { authorization: `Bearer ${key}` }, read: [] })).rejects.toThrow(/Failed to fetch/);
  });
});
