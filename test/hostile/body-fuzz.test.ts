/**
 * A body fuzzer with a fixed seed (fast-check) over every POST endpoint, REST and tRPC: arbitrary
 * JSON values, valid bodies with fields replaced by arbitrary values, arbitrary bytes and arbitrary
 * content types. No answer is a 5xx that the input caused, none is slow, and memory stays bounded.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { acceptableForBadInput, errorCodeOf, rawRequest, type RawAnswer } from "./support/hostile-service.js";

const SEED = 20261125;
const RUNS = 40;

let service: TestService;
let key: string;
let image: string;
beforeAll(async () => {
  // No models installed and fetches short: well-formed calls end quickly as 503 MODEL_NOT_INSTALLED or 502.
  service = await startTestService({ ATELIER_FETCH_TIMEOUT_MS: "500", ATELIER_ALLOWED_PRIVATE_HOSTS: "" });
  key = await service.createKey("fuzz", 1_000_000);
  image = dataUrl(await gradientPng(8, 8));
});
afterAll(() => service?.close());

const ENDPOINTS: { rest: string; trpc: string; valid: () => Record<string, unknown> }[] = [
  { rest: "/api/v1/tools/upscale", trpc: "/trpc/tools.upscale", valid: () => ({ imageUrl: image, scale: 2, model: "lanczos", outputFormat: "png" }) },
  { rest: "/api/v1/tools/style-transfer", trpc: "/trpc/tools.styleTransfer", valid: () => ({ imageUrl: image, style: "udnie", strength: 0.5, preserveColors: false }) },
  { rest: "/api/v1/tools/background-remove", trpc: "/trpc/tools.backgroundRemove",
    // A model not installed here, so a well-formed call ends at once (ISNet, when its package is installed, takes seconds).
    valid: () => ({ imageUrl: image, replacement: "white", onlyMask: false, model: "portrait-selfie" }) },
  { rest: "/api/v1/generate", trpc: "/trpc/generate", valid: () => ({ prompt: "a red bicycle", width: 256, height: 256, n: 1 }) },
  { rest: "/api/v1/prompt/improve", trpc: "/trpc/prompt.improve", valid: () => ({ prompt: "a cat", style: "photographic" }) },
];

const HEADERS = { "content-type": "application/json", authorization: "" };
const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  rawRequest(service.port, "POST", path, { ...HEADERS, authorization: `Bearer ${key}`, ...headers }, body);

function check(path: string, body: string | Buffer, answer: RawAnswer): void {
  const shown = Buffer.from(body).toString("latin1").slice(0, 200);
  expect(acceptableForBadInput(answer), `${path} ${shown} → ${answer.status} ${errorCodeOf(answer.body)}`).toBe(true);
  expect(answer.ms, `${path} ${shown} took ${Math.round(answer.ms)} ms`).toBeLessThan(5000);
  // Every answer is JSON with a request id header.
  expect(answer.headers["x-request-id"]).toBeTruthy();
  expect(() => JSON.parse(answer.body)).not.toThrow();
}

const fields = (endpoint: (typeof ENDPOINTS)[number]) => Object.keys(endpoint.valid());

describe("body fuzzer (fast-check, fixed seed)", () => {
  const rssBefore = process.memoryUsage().rss;

  for (const endpoint of ENDPOINTS) {
    it(`${endpoint.rest} and ${endpoint.trpc}: arbitrary JSON, mutated fields, bytes`, async () => {
      const mutated = fc
        .record({ field: fc.constantFrom(...fields(endpoint), "extra", "__proto__", "constructor"), value: fc.jsonValue({ maxDepth: 4 }) })
        .map(({ field, value }) => JSON.stringify({ ...endpoint.valid(), [field]: value }));
      const body = fc.oneof(
        fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value)),
        mutated,
        fc.string({ maxLength: 200 }),
        fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
      );
      await fc.assert(
        fc.asyncProperty(body, fc.boolean(), async (text, viaTrpc) => {
          const path = viaTrpc ? endpoint.trpc : endpoint.rest;
          const answer = await post(path, text);
          if (process.env.FUZZ_TRACE) console.log("FUZZ", path, text.replace(/base64,[A-Za-z0-9+/=]+/, "base64,…").slice(0, 300), answer.status, Math.round(answer.ms), Math.round(process.memoryUsage().rss / 2 ** 20));
          check(path, text, answer);
        }),
        { seed: SEED, numRuns: RUNS },
      );
    });
  }

  it("arbitrary content types and encodings on every endpoint", async () => {
    const contentType = fc.oneof(
      fc.constantFrom("application/json", "APPLICATION/JSON; charset=UTF-16", "text/plain", "application/x-www-form-urlencoded", "", "application/json; charset=", "*/*", "application/json, text/plain"),
      fc.string({ maxLength: 60 }).filter((value) => /^[\x20-\x7e]*$/.test(value)),
    );
    const encoding = fc.constantFrom("identity", "gzip", "br", "deflate, gzip");
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS.flatMap((endpoint) => [endpoint.rest, endpoint.trpc])), contentType, encoding, async (path, type, coding) => {
        const body = JSON.stringify({ prompt: "a cat" });
        check(path, body, await post(path, body, { "content-type": type, "content-encoding": coding }));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("kept memory bounded over the run", () => {
    expect((process.memoryUsage().rss - rssBefore) / 2 ** 20).toBeLessThan(300);
  });
});
