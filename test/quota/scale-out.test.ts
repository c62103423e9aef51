/**
 * Two routers sharing one Redis (quota counters) and one PostgreSQL (API keys), over real HTTP:
 * what `ATELIER_REDIS_URL` and `ATELIER_DATABASE_URL` promise in docs/operations.md ("Several routers").
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORE_UNAVAILABLE_CODE, STORE_UNAVAILABLE_RETRY_SECONDS } from "../../database/store-unavailable.js";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";
import { skipWithoutRedis, startRedisServer, type RedisServer } from "../support/redis-server.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

const SKIP = [skipWithoutRedis("quota/scale-out.test"), skipWithoutPostgres("quota/scale-out.test")].some(Boolean);

describe.skipIf(SKIP)("two routers sharing Redis and PostgreSQL", () => {
  let redis: RedisServer;
  let postgres: PostgresServer;
  let routers: [TestService, TestService];
  let image: string;

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
    console.info(`[quota/scale-out.test] PostgreSQL ready in ${postgres.startupMs} ms (initdb + start-up)`);
    const env = {
      ATELIER_RATE_LIMIT_PER_HOUR: "7",
      ATELIER_REDIS_URL: redis.url,
      ATELIER_DATABASE_URL: await postgres.createDatabase(),
    };
    // Started together: both migrate the fresh database at once.
    routers = await Promise.all([startTestService(env), startTestService(env)]);
    image = dataUrl(await gradientPng(8, 8));
  });

  afterAll(async () => {
    for (const router of routers ?? []) {
      await router.close();
      fs.rmSync(router.dataDir, { recursive: true, force: true });
    }
    await redis?.dispose();
    await postgres?.dispose();
  });

  const upscale = (router: TestService, key: string) => router.post("/tools/upscale", { imageUrl: image, scale: 2 }, key);

  it("accepts a key created through one router on the other, with one shared counter", async () => {
    const [a, b] = routers;
    const key = await a.createKey("shared");
    const first = await upscale(b, key);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("6");
    const second = await upscale(a, key);
    expect(second.status).toBe(200);
    expect(second.headers.get("x-ratelimit-remaining")).toBe("5");

    const [, id] = key.split("_");
    expect(await b.services.keys.revoke(id!)).toBe(true);
    expect((await upscale(a, key)).status).toBe(401);
  });

  it("grants exactly the key's limit under 100 concurrent requests spread across both", async () => {
    const key = await routers[1].createKey("burst", 30);
    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => upscale(routers[i % 2]!, key)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(30);
    expect(statuses.filter((status) => status === 429)).toHaveLength(70);
    const remaining = responses.filter((response) => response.status === 200).map((response) => Number(response.headers.get("x-ratelimit-remaining")));
    expect(new Set(remaining).size).toBe(30);
    // Both routers granted some: the limit held across processes, not within one.
    const grantedBy = [0, 1].map((side) => responses.filter((response, i) => i % 2 === side && response.status === 200).length);
    expect(grantedBy.every((count) => count > 0)).toBe(true);
  });

  it("keeps nothing in the routers' SQLite files", () => {
    for (const router of routers) {
      expect(fs.existsSync(path.join(router.dataDir, "atelier.db"))).toBe(false);
      expect(fs.existsSync(path.join(router.dataDir, "quota.db"))).toBe(false);
    }
  });

  it("answers 503 with Retry-After while Redis is down, keeps serving, and recovers", async () => {
    const key = await routers[0].createKey("outage");
    expect((await upscale(routers[0], key)).status).toBe(200);
    await redis.stop();
    try {
      for (const router of routers) {
        const response = await upscale(router, key);
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).toBe(String(STORE_UNAVAILABLE_RETRY_SECONDS));
        expect(await response.json()).toMatchObject({
          code: STORE_UNAVAILABLE_CODE,
          message: "The quota store is unreachable, so the request cannot be metered. Retry in a few seconds.",
        });
        // The process is alive and still answering what needs no quota.
        expect((await upscale(router, "atl_aaaaaaaaaaaa_" + "A".repeat(43))).status).toBe(401);
      }
    } finally {
      await redis.start();
    }
    // Counters restart empty (the test server persists nothing); each router reconnects by itself.
    for (const router of routers) {
      const deadline = Date.now() + 10_000;
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        status = (await upscale(router, key)).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
    }
  });

  it("answers 503 while PostgreSQL is down", async () => {
    const key = await routers[0].createKey("database outage");
    expect((await upscale(routers[1], key)).status).toBe(200);
    await postgres.dispose();
    for (const router of routers) {
      const response = await upscale(router, key);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe(String(STORE_UNAVAILABLE_RETRY_SECONDS));
      expect(await response.json()).toMatchObject({
        code: STORE_UNAVAILABLE_CODE,
        message: "The API key store is unreachable, so the key cannot be checked. Retry in a few seconds.",
      });
    }
  });
});
