/**
 * Usage is recorded by the API path itself: calls over real HTTP show up in the usage reports by
 * key, operation and status (429 and 400 included), with nothing counted for calls without a key,
 * the counters survive a restart of the service on the same data folder, and routers sharing one
 * PostgreSQL database add to the same buckets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyIdOf } from "../../server/keys/api-key-format.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { skipWithoutPostgres, startPostgresServer } from "../support/postgres-server.js";
import { fileTempDir } from "../support/temp-dir.js";
import { startTestService, type TestService } from "../support/test-service.js";

let service: TestService;
const dataDir = fileTempDir("test");

beforeAll(async () => {
  // A long flush interval: what the reports show must come from the flush that queries make.
  service = await startTestService({ ATELIER_USAGE_FLUSH_MS: "600000" }, dataDir);
});
afterAll(async () => {
  await service.close();
});

describe("usage recorded by the API path", () => {
  it("counts each call by key, operation and status, with compute time", async () => {
    const key = await service.createKey("usage", 3);
    const other = await service.createKey("other");
    const keyId = keyIdOf(key)!;
    const image = dataUrl(await gradientPng(16, 16));
    expect((await service.post("/prompt/improve", { prompt: "a lighthouse at dusk" }, key)).status).toBe(200);
    expect((await service.post("/tools/upscale", { imageUrl: image, scale: 2, model: "lanczos" }, key)).status).toBe(200);
    expect((await service.post("/tools/upscale", { imageUrl: image, scale: 99 }, key)).status).toBe(400);
    expect((await service.post("/prompt/improve", { prompt: "over quota" }, key)).status).toBe(429);
    expect((await service.post("/prompt/improve", { prompt: "no key" })).status).toBe(401);
    expect((await service.post("/prompt/improve", { prompt: "someone else" }, other)).status).toBe(200);

    const report = await service.services.usage.report("24h", { keyIds: [keyId] });
    expect(report.totals.requests).toBe(4);
    expect(report.totals.errors).toBe(2);
    const byName = Object.fromEntries(report.byOperation.map((row) => [row.operation, row]));
    expect(byName["prompt/improve"]!.statuses).toEqual({ "200": 1, "429": 1 });
    expect(byName["tools/upscale"]!.statuses).toEqual({ "200": 1, "400": 1 });
    expect(byName["tools/upscale"]!.computeSeconds).toBeGreaterThan(0);
    expect(report.series.find((row) => row.operation === "tools/upscale")!.requests.at(-1)).toBe(2);

    const whole = await service.services.usage.report("30d", undefined);
    expect(whole.totals.requests).toBe(5);
    const top = await service.services.usage.topKeys("24h", undefined);
    expect(top.map((row) => [row.keyId, row.requests, row.errors])).toEqual([
      [keyId, 4, 2],
      [keyIdOf(other)!, 1, 0],
    ]);
  });

  it("keeps counts written at shutdown across a restart", async () => {
    const key = await service.createKey("restart");
    expect((await service.post("/prompt/improve", { prompt: "counted before the restart" }, key)).status).toBe(200);
    await service.close();
    service = await startTestService({ ATELIER_USAGE_FLUSH_MS: "600000" }, dataDir);
    const report = await service.services.usage.report("24h", { keyIds: [keyIdOf(key)!] });
    expect(report.totals.requests).toBe(1);
  });
});

describe.skipIf(skipWithoutPostgres("rest-usage on PostgreSQL"))("usage with ATELIER_DATABASE_URL", () => {
  it("two routers on one database add to the same hourly buckets", async () => {
    const postgres = await startPostgresServer();
    const routers: TestService[] = [];
    try {
      const url = await postgres.createDatabase("usage_routers");
      const env = { ATELIER_DATABASE_URL: url, ATELIER_USAGE_FLUSH_MS: "600000" };
      routers.push(await startTestService(env), await startTestService(env));
      const [first, second] = routers as [TestService, TestService];
      const key = await first.createKey("shared");
      for (const router of [first, second, second]) {
        expect((await router.post("/prompt/improve", { prompt: "a shared key" }, key)).status).toBe(200);
      }
      // The second router's counts reach the database with its next flush (here: at once).
      await second.services.usage.flush();
      const report = await first.services.usage.report("24h", { keyIds: [keyIdOf(key)!] });
      expect(report.byOperation).toEqual([expect.objectContaining({ operation: "prompt/improve", requests: 3, statuses: { "200": 3 } })]);
    } finally {
      for (const router of routers) await router.close();
      await postgres.dispose();
    }
  });
});
