/**
 * A POST to an API path without its `/api` prefix (`/v1/tools/upscale`) reached the console, whose
 * origin check answered a text/plain 403 about the console's pages. Such a path now gets the API's
 * JSON 404 naming the path meant, console on or off, whatever the method; console pages are as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freeLoopbackPort } from "../../support/free-port.js";
import { startConsoleService, type ConsoleService } from "../../console/support/console-service.js";

const services: { console: string; service?: ConsoleService }[] = [{ console: "on" }, { console: "off" }];

beforeAll(async () => {
  await Promise.all(
    services.map(async (entry) => {
      // No worker is needed: these requests never reach one.
      entry.service = await startConsoleService({ ATELIER_CONSOLE: entry.console, ATELIER_WORKER_ADDRESS: `127.0.0.1:${await freeLoopbackPort()}`, ATELIER_PROVISION_MODELS: "false", ATELIER_METRICS_PORT: "0" });
    }),
  );
});

afterAll(async () => {
  await Promise.all(services.map((entry) => entry.service?.close()));
});

async function expectSuggestion(response: Response, meant: string): Promise<void> {
  expect(response.status).toBe(404);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as { code: string; message: string; requestId: string };
  expect(body.code).toBe("NOT_FOUND");
  expect(body.message).toBe(`No such path. The API lives under /api: did you mean ${meant}?`);
  expect(body.requestId).toBe(response.headers.get("x-request-id"));
}

describe.each(services)("an API path without /api, console $console", (entry) => {
  it("POST /v1/tools/upscale answers a JSON 404 suggesting POST /api/v1/tools/upscale, from a script with no Origin", async () => {
    const response = await fetch(`${entry.service!.url}/v1/tools/upscale`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer atl_nothing_real" },
      body: JSON.stringify({ imageUrl: "https://example.com/photo.png", scale: 2 }),
    });
    await expectSuggestion(response, "POST /api/v1/tools/upscale");
  });

  it("answers the same for another method, another path and a query string", async () => {
    await expectSuggestion(await fetch(`${entry.service!.url}/v1/models?task=upscale`), "GET /api/v1/models");
    await expectSuggestion(await fetch(`${entry.service!.url}/v1/jobs/job_123`, { method: "DELETE" }), "DELETE /api/v1/jobs/job_123");
    await expectSuggestion(await fetch(`${entry.service!.url}/v1`, { method: "POST", headers: { origin: "http://evil.example" } }), "POST /api/v1");
  });
});

describe("console pages beside it", () => {
  it("are served as before, and a path that merely starts like it gets the plain 404", async () => {
    const url = services[0]!.service!.url;
    const signIn = await fetch(`${url}/sign-in`);
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get("content-type")).toMatch(/^text\/html/);
    const lookalike = await fetch(`${url}/v1x/tools`);
    expect(lookalike.status).toBe(404);
    expect(((await lookalike.json()) as { message: string }).message).not.toContain("did you mean");
    // A console form post from elsewhere is still refused by the console's origin check.
    const crossOrigin = await fetch(`${url}/sign-in`, { method: "POST", headers: { origin: "http://evil.example", "content-type": "application/x-www-form-urlencoded" }, body: "email=a%40b.c&password=x" });
    expect(crossOrigin.status).toBe(403);
  });
});
