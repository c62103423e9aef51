/**
 * Quota races: many concurrent requests on one key, spread over two routers sharing Redis (quota)
 * and PostgreSQL (keys), with early quota checks and capped refunds in the path. Exactly the limit
 * is granted, the rest is 429, and nothing is a 5xx.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";
import { skipWithoutRedis, startRedisServer, type RedisServer } from "../support/redis-server.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { rawRequest } from "./support/hostile-service.js";

const SKIP = [skipWithoutRedis("hostile/quota-races.test"), skipWithoutPostgres("hostile/quota-races.test")].some(Boolean);

describe.skipIf(SKIP)("quota races over two routers", () => {
  let redis: RedisServer;
  let postgres: PostgresServer;
  let routers: TestService[] = [];

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
    const env = { ATELIER_REDIS_URL: redis.url, ATELIER_DATABASE_URL: await postgres.createDatabase(), ATELIER_QUOTA_MAX_REFUNDS: "2" };
    routers = await Promise.all([startTestService(env), startTestService(env)]);
  });
  afterAll(async () => {
    for (const router of routers) {
      await router.close();
      fs.rmSync(router.dataDir, { recursive: true, force: true });
    }
    await redis?.dispose();
    await postgres?.dispose();
  });

  const improve = (router: TestService, key: string, viaTrpc: boolean) =>
    rawRequest(router.port, "POST", viaTrpc ? "/trpc/prompt.improve" : "/api/v1/prompt/improve", { "content-type": "application/json", authorization: `Bearer ${key}` }, JSON.stringify({ prompt: "a lighthouse at dusk" }));

  it("grants exactly 20 of 80 concurrent requests spread over both routers and both transports", async () => {
    const key = await routers[0]!.createKey("race", 20);
    const answers = await Promise.all(Array.from({ length: 80 }, (_, i) => improve(routers[i % 2]!, key, i % 4 >= 2)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(60);
    for (const answer of answers.filter((entry) => entry.status === 429)) expect(Number(answer.headers["retry-after"])).toBeGreaterThan(0);
  });

  it("caps refunds across routers: failures beyond ATELIER_QUOTA_MAX_REFUNDS stay charged", async () => {
    const key = await routers[1]!.createKey("failing", 10);
    // No generation model is installed: each call is a 503 MODEL_NOT_INSTALLED, a server-side failure.
    const generate = (router: TestService) =>
      rawRequest(router.port, "POST", "/api/v1/generate", { "content-type": "application/json", authorization: `Bearer ${key}` }, JSON.stringify({ prompt: "a cat" }));
    const remaining: string[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await generate(routers[i % 2]!);
      expect(answer.status).toBe(503);
      remaining.push(String(answer.headers["x-ratelimit-remaining"]));
    }
    expect(remaining).toEqual(["10", "10", "9", "8"]);
  });
});
