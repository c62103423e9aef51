/** Per-key quotas over real HTTP: exactness under concurrency, headers, 429, refunds, persistence. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileTempDir } from "../support/temp-dir.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

let service: TestService;
let image: string;

// Given, not the service's own: a test restarts the service over it.
const dataDir = fileTempDir("test");

beforeAll(async () => {
  service = await startTestService({ ATELIER_RATE_LIMIT_PER_HOUR: "7" }, dataDir);
  image = dataUrl(await gradientPng(8, 8));
});
afterAll(async () => {
  await service.close();
});

const upscale = (key: string) => service.post("/tools/upscale", { imageUrl: image, scale: 2 }, key);

describe("quota", () => {
  it("announces the policy and counts down in IETF and X-RateLimit headers", async () => {
    const key = await service.createKey("headers");
    const first = await upscale(key);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"hourly";q=7;w=3600');
    expect(first.headers.get("ratelimit")).toMatch(/^"hourly";r=6;t=(3600|359\d)$/);
    expect(first.headers.get("x-ratelimit-limit")).toBe("7");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("6");
    const reset = Number(first.headers.get("x-ratelimit-reset"));
    expect(reset - Date.now() / 1000).toBeGreaterThan(3500);
    expect(reset - Date.now() / 1000).toBeLessThanOrEqual(3601);
    const second = await upscale(key);
    expect(second.headers.get("x-ratelimit-remaining")).toBe("5");
  });

  it("grants exactly the limit under 200 concurrent requests, then answers 429 with Retry-After", async () => {
    const key = await service.createKey("burst", 50);
    const responses = await Promise.all(Array.from({ length: 200 }, () => upscale(key)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(statuses.filter((status) => status === 429)).toHaveLength(150);
    const refused = responses.find((response) => response.status === 429)!;
    const body = (await refused.json()) as { code: string; message: string };
    expect(body.code).toBe("RATE_LIMITED");
    expect(body.message).toMatch(/50 requests per hour/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const remaining = responses.filter((response) => response.status === 200).map((response) => Number(response.headers.get("x-ratelimit-remaining")));
    expect(new Set(remaining).size).toBe(50);
    expect(Math.min(...remaining)).toBe(0);
  });

  it("keeps keys apart", async () => {
    const spent = await service.createKey("spent", 1);
    const fresh = await service.createKey("fresh", 1);
    expect((await upscale(spent)).status).toBe(200);
    expect((await upscale(spent)).status).toBe(429);
    expect((await upscale(fresh)).status).toBe(200);
  });

  it("does not charge requests that fail with a server error", async () => {
    const key = await service.createKey("refunds", 3);
    for (let attempt = 0; attempt < 5; attempt++) {
      const response = await service.post("/generate", { prompt: "a cat" }, key);
      expect(response.status).toBe(503);
      expect(response.headers.get("x-ratelimit-remaining")).toBe("3");
    }
    const afterFailures = await upscale(key);
    expect(afterFailures.status).toBe(200);
    expect(afterFailures.headers.get("x-ratelimit-remaining")).toBe("2");
  });

  it("charges client errors, which cost the server work too", async () => {
    const key = await service.createKey("client-errors", 3);
    const invalid = await service.post("/tools/upscale", { imageUrl: image, scale: 99 }, key);
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("x-ratelimit-remaining")).toBe("2");
  });

  it("survives a restart of the service", async () => {
    const key = await service.createKey("restart", 5);
    for (let attempt = 0; attempt < 3; attempt++) expect((await upscale(key)).status).toBe(200);
    await service.close();
    service = await startTestService({ ATELIER_RATE_LIMIT_PER_HOUR: "7" }, dataDir);
    const after = await upscale(key);
    expect(after.status).toBe(200);
    expect(after.headers.get("x-ratelimit-remaining")).toBe("1");
  });
});
