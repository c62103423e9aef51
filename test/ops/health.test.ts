/** `/healthz` and `/readyz` on a real service: no key, no quota, and a real list of what is not ready. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freeLoopbackPort } from "../support/free-port.js";
import { skipWithoutRedis, startRedisServer, type RedisServer } from "../support/redis-server.js";
import { startTestService, type TestService } from "../support/test-service.js";

interface ReadyBody {
  status: string;
  ready: boolean;
  notReady: { name: string; detail: string }[];
  checks: { name: string; ok: boolean; critical: boolean; detail?: string }[];
}

describe("health endpoints of a one-machine service", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });

  it("answers /healthz with 200, no key, no rate-limit headers", async () => {
    const response = await fetch(`${service.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ok" });
    expect(response.headers.get("x-ratelimit-limit")).toBeNull();
    expect(response.headers.get("x-request-id")).toBeTruthy();
  });

  it("answers /readyz with 200 and every check it ran", async () => {
    const response = await fetch(`${service.url}/readyz`);
    const body = (await response.json()) as ReadyBody;
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.ready).toBe(true);
    expect(body.checks.map((check) => check.name).sort()).toEqual(["keys", "models-folder", "workers"]);
    expect(body.checks.every((check) => check.ok)).toBe(true);
  });

  it("never counts health probes against a quota: a spent key's requests are not involved", async () => {
    for (let i = 0; i < 5; i++) expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
  });

  it("lists both paths in the OpenAPI document, without security", async () => {
    const document = (await (await fetch(`${service.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, { get?: { security?: unknown[] } }> };
    expect(document.paths["/healthz"]?.get?.security).toEqual([]);
    expect(document.paths["/readyz"]?.get?.security).toEqual([]);
  });
});

describe("readiness when dependencies are down", () => {
  let service: TestService;
  let redis: RedisServer | undefined;
  const skip = skipWithoutRedis("readiness");

  beforeAll(async () => {
    if (skip) return;
    redis = await startRedisServer();
    // A worker address where nothing listens, and a real Redis that the test stops.
    const deadWorker = `127.0.0.1:${await freeLoopbackPort()}`;
    service = await startTestService({ ATELIER_WORKER_ADDRESS: deadWorker, ATELIER_REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await service?.close();
    await redis?.dispose();
  });

  it.skipIf(skip)("answers 503 naming the unreachable worker, then Redis once it stops", async () => {
    let response = await fetch(`${service.url}/readyz`);
    let body = (await response.json()) as ReadyBody;
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(body.notReady.map((item) => item.name)).toEqual(["workers"]);
    expect(body.notReady[0]!.detail).toMatch(/127\.0\.0\.1:\d+ \(upscale, generation, style, background, prompt, catalog\)/);
    expect(body.checks.find((check) => check.name === "redis")?.ok).toBe(true);

    await redis!.stop();
    response = await fetch(`${service.url}/readyz`);
    body = (await response.json()) as ReadyBody;
    expect(response.status).toBe(503);
    expect(body.notReady.map((item) => item.name).sort()).toEqual(["redis", "workers"]);
    // Liveness is about this process only.
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });
});
