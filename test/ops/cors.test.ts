/** ATELIER_CORS_ORIGINS: off by default; when set, real preflights and responses for listed origins only. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";

const ALLOWED = "https://app.example.com";

function preflight(url: string, origin: string): Promise<Response> {
  return fetch(`${url}/api/v1/tools/upscale`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
  });
}

describe("CORS enabled for one origin", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ ATELIER_CORS_ORIGINS: `${ALLOWED},http://localhost:5173` });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("answers a listed origin's preflight with 204 and the allowed method and headers", async () => {
    const response = await preflight(service.url, ALLOWED);
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
    expect(response.headers.get("access-control-max-age")).toBe("600");
    expect(response.headers.get("vary")).toContain("Origin");
  });

  it("gives an unlisted origin no CORS headers, so its browser refuses the call", async () => {
    const response = await preflight(service.url, "https://evil.example");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("marks real responses for the listed origin, exposing the request id and quota headers", async () => {
    const key = await service.createKey();
    const response = await service.post("/prompt/improve", { prompt: "a cat" }, key, { origin: ALLOWED });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    const exposed = response.headers.get("access-control-expose-headers")?.toLowerCase() ?? "";
    for (const header of ["x-request-id", "x-ratelimit-remaining", "retry-after"]) expect(exposed).toContain(header);
  });
});

describe("CORS off (the default)", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });

  it("sends no CORS headers and refuses OPTIONS like any other unsupported method", async () => {
    const response = await preflight(service.url, ALLOWED);
    expect(response.status).toBe(405);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });
});
