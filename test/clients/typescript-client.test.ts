/**
 * The TypeScript client against a real Atelier over real HTTP with real keys and cheap real
 * models: every method, every input kind, every error family, quota headers, Retry-After, timeouts
 * and cancellation; connection drops and 5xx through a fault proxy in front of the service.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import sharp from "sharp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  Atelier,
  AtelierError,
  AtelierImage,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
} from "../../clients/typescript/src/node.js";
import { fileTempDir } from "../support/temp-dir.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import type { TestService } from "../support/test-service.js";
import { clientModelsAvailable, startClientTestService } from "./client-service.js";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.js";

let service: TestService;
let proxy: FaultProxy;
let key: string;
let client: Atelier;
let png: Buffer;
let tmp: string;

const rejection = async (promise: Promise<unknown>): Promise<AtelierError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AtelierError);
  return error as AtelierError;
};

describe.runIf(clientModelsAvailable())("TypeScript client against a real Atelier", () => {
  const modelsDir = fileTempDir("test-models");
  beforeAll(async () => {
    service = await startClientTestService(modelsDir);
    proxy = await startFaultProxy(service.url);
    key = await service.createKey("ts-client");
    client = new Atelier({ apiKey: key, baseURL: service.url });
    png = await gradientPng(24, 16);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-ts-client-"));
  });
  afterAll(async () => {
    await proxy?.close();
    await service?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });
  beforeEach(() => proxy?.reset());

  /** The POSTs that reached the proxy (a server with jobs adds the GETs of a followed job). */
  const posts = () => proxy.seen.filter((request) => request.method === "POST");

  /** A client that goes through the fault proxy, with fast defaults for retry tests. */
  const viaProxy = (options: ConstructorParameters<typeof Atelier>[0] = {}) => new Atelier({ apiKey: key, baseURL: proxy.url, ...options });

  describe("operations", () => {
    it("images.generate draws with the doodle model and returns an image with bytes, quota and request id", async () => {
      const result = await client.images.generate({ prompt: "an owl", seed: 7, width: 128, height: 96 });
      expect(result).toMatchObject({ model: "cvae-quickdraw", seed: 7, steps: 1 });
      const [image] = result.data;
      expect(image).toBeInstanceOf(AtelierImage);
      expect(image).toMatchObject({ mimeType: "image/png", width: 128, height: 96 });
      const metadata = await sharp(image!.bytes()).metadata();
      expect([metadata.format, metadata.width, metadata.height]).toEqual(["png", 128, 96]);
      expect(result.requestId).toBe(result.id);
      expect(result.rateLimit).toMatchObject({ limit: 100 });
      expect(result.rateLimit!.remaining).toBeLessThan(100);
      expect(result.rateLimit!.resetAt.getTime()).toBeGreaterThan(Date.now());
      // The metadata stays out of the body's JSON; images serialise as the API's objects.
      const json = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
      expect(Object.keys(json)).not.toContain("rateLimit");
      expect((json.data as unknown[])[0]).toEqual({ url: image!.url, mimeType: "image/png", width: 128, height: 96 });
    });

    it("tools.upscale takes a path, a Buffer, a Uint8Array, a Blob, a file URL, a data URL and a previous result image", async () => {
      const file = path.join(tmp, "source.png");
      fs.writeFileSync(file, png);
      const inputs = [file, png, new Uint8Array(png), new Blob([png], { type: "image/png" }), pathToFileURL(file), dataUrl(png)];
      for (const image of inputs) {
        const result = await client.tools.upscale({ image, scale: 2, model: "lanczos" });
        expect(result).toMatchObject({ model: "lanczos", scale: 2 });
        expect(result.data[0]).toMatchObject({ width: 48, height: 32 });
      }
      const first = await client.tools.upscale({ image: png, scale: 2 });
      const second = await client.tools.upscale({ image: first.data[0]!, scale: 2 });
      expect(second.data[0]).toMatchObject({ width: 96, height: 64 });
    });

    it("sends local images as a multipart form with the file as it is, and URLs in JSON, with the same answers", async () => {
      const file = path.join(tmp, "form.png");
      fs.writeFileSync(file, png);
      const reference = await client.tools.upscale({ imageUrl: dataUrl(png), scale: 3, model: "lanczos" });
      const forms = [file, png, new Blob([png]), pathToFileURL(file)];
      for (const image of [...forms, dataUrl(png), reference.data[0]!]) {
        const result = await viaProxy().tools.upscale({ image, scale: 3, model: "lanczos" });
        if (image !== reference.data[0]) expect(result.data[0]!.url).toBe(reference.data[0]!.url);
      }
      const types = posts().map((request) => request.headers["content-type"]!.split(";")[0]);
      expect(types).toEqual([...forms.map(() => "multipart/form-data"), "application/json", "application/json"]);
      // What the server read from a form is the JSON request: a style's fields and flags included.
      const styled = await viaProxy().tools.styleTransfer({ image: png, style: "candy-lite", strength: 0.5, preserveColors: true });
      const styledJson = await client.tools.styleTransfer({ imageUrl: dataUrl(png), style: "candy-lite", strength: 0.5, preserveColors: true });
      expect(styled.data[0]!.url).toBe(styledJson.data[0]!.url);
    });

    it("tools.removeBackground takes a replacement image as a second file, or inline beside an image URL", async () => {
      const backdrop = await gradientPng(8, 8);
      const reference = await client.tools.removeBackground({ imageUrl: dataUrl(png), replacement: dataUrl(backdrop), model: "portrait-selfie" });
      expect(reference.replacement).toBe("image");
      const asFiles = await viaProxy().tools.removeBackground({ image: png, replacement: backdrop, model: "portrait-selfie" });
      const besideUrl = await viaProxy().tools.removeBackground({ image: dataUrl(png), replacement: new Blob([backdrop]), model: "portrait-selfie" });
      const previous = await viaProxy().tools.removeBackground({ image: png, replacement: { url: dataUrl(backdrop) }, model: "portrait-selfie" });
      for (const result of [asFiles, besideUrl, previous]) expect(result.data[0]!.url).toBe(reference.data[0]!.url);
      expect(posts().map((request) => request.headers["content-type"]!.split(";")[0])).toEqual(["multipart/form-data", "application/json", "multipart/form-data"]);
    });

    it("jobs.create sends a local image as a form too", async () => {
      const job = await viaProxy().jobs.create("tools.upscale", { image: png, scale: 2, model: "lanczos" });
      const result = await job.wait();
      expect(result.data[0]).toMatchObject({ width: 48, height: 32 });
      expect(posts()[0]!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    });

    it("saves a result to a file, and sends JPEG bytes with their own media type", async () => {
      const jpeg = await sharp(png).jpeg().toBuffer();
      const result = await client.tools.upscale({ image: jpeg, scale: 3, outputFormat: "webp" });
      const saved = await result.data[0]!.save(path.join(tmp, "big.webp"));
      const metadata = await sharp(fs.readFileSync(saved)).metadata();
      expect([metadata.format, metadata.width, metadata.height]).toEqual(["webp", 72, 48]);
      expect((await result.data[0]!.blob().arrayBuffer()).byteLength).toBe(fs.statSync(saved).size);
    });

    it("tools.styleTransfer paints with a lite style", async () => {
      const photo = await gradientPng(64, 48);
      const result = await client.tools.styleTransfer({ image: photo, style: "candy-lite" });
      expect(result).toMatchObject({ style: "candy-lite" });
      expect(result.data[0]).toMatchObject({ width: 64, height: 48, mimeType: "image/png" });
    });

    it("tools.removeBackground runs the selfie matte and fills the background", async () => {
      const result = await client.tools.removeBackground({ image: await gradientPng(64, 64), replacement: "white", model: "portrait-selfie" });
      expect(result).toMatchObject({ model: "portrait-selfie", replacement: "color:#ffffff" });
      expect(result.data[0]).toMatchObject({ width: 64, height: 64 });
    });

    it("prompts.improve returns the improved prompt and its variants", async () => {
      const result = await client.prompts.improve({ prompt: "a cat on a roof", variants: 2, seed: 3 });
      expect(result).toMatchObject({ model: "prompt-builtin", original: "a cat on a roof", seed: 3 });
      expect(result.prompt.length).toBeGreaterThan("a cat on a roof".length);
      expect(result.variants).toHaveLength(2);
      expect(result.variants[0]!.prompt).toBe(result.prompt);
    });

    it("models.list needs no key and reports what is installed", async () => {
      const anonymous = new Atelier({ baseURL: service.url, apiKey: "" });
      const result = await anonymous.models.list();
      expect(result.object).toBe("list");
      const installed = result.data.filter((model) => model.installed).map((model) => model.id);
      expect(installed).toEqual(expect.arrayContaining(["lanczos", "cvae-quickdraw", "candy-lite"]));
      expect(result.rateLimit).toBeNull();
      expect(result.requestId).toMatch(/.+/);
    });

    it("health.live and health.ready call the root probes", async () => {
      expect((await client.health.live()).status).toBe("ok");
      const ready = await client.health.ready();
      expect(ready.ready, JSON.stringify(ready.notReady)).toBe(true);
      expect(ready.checks.map((check) => check.name)).toContain("workers");
    });

    it("reads ATELIER_API_KEY and ATELIER_BASE_URL when no options are given", async () => {
      const saved = { key: process.env.ATELIER_API_KEY, url: process.env.ATELIER_BASE_URL };
      process.env.ATELIER_API_KEY = key;
      process.env.ATELIER_BASE_URL = service.url;
      try {
        const result = await new Atelier().prompts.improve({ prompt: "a boat" });
        expect(result.original).toBe("a boat");
      } finally {
        process.env.ATELIER_API_KEY = saved.key;
        process.env.ATELIER_BASE_URL = saved.url;
        if (saved.key === undefined) delete process.env.ATELIER_API_KEY;
        if (saved.url === undefined) delete process.env.ATELIER_BASE_URL;
      }
    });
  });

  describe("errors from the service", () => {
    it("a wrong key is an AuthenticationError with status, code, message and request id", async () => {
      const error = await rejection(new Atelier({ apiKey: "atl_wrong", baseURL: service.url }).prompts.improve({ prompt: "x" }));
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
      expect(error.message.length).toBeGreaterThan(10);
      expect(error.requestId).toMatch(/.+/);
    });

    it("an out-of-range field is a BadRequestError naming the field in issues", async () => {
      const error = await rejection(client.tools.upscale({ image: png, scale: 9 }));
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      expect(error.issues.map((issue) => issue.path)).toContain("scale");
    });

    it("bytes that are no image are a BadRequestError (422) from the server, not a client crash", async () => {
      const error = await rejection(client.tools.upscale({ image: new TextEncoder().encode("not an image at all") }));
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error).toMatchObject({ status: 422, code: "IMAGE_UNDECODABLE" });
    });

    it("an unknown resource is a NotFoundError", async () => {
      const error = await rejection(client.jobs.get("job_does_not_exist"));
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: "NOT_FOUND" });
    });

    it("a model that is not installed is a ServiceUnavailableError, raised without retrying", async () => {
      const missing = (await client.models.list()).data.find((model) => model.task === "generate" && !model.installed);
      expect(missing, "the catalog has a generation model that is not installed here").toBeDefined();
      const error = await rejection(viaProxy().images.generate({ prompt: "an owl", model: missing!.id }));
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect(error).toMatchObject({ status: 503, code: "MODEL_NOT_INSTALLED" });
      expect(posts()).toHaveLength(1);
    });

    it("a spent quota is a RateLimitError with the reset time; an hour-long Retry-After is not waited for", async () => {
      const tiny = new Atelier({ apiKey: await service.createKey("tiny", 1), baseURL: proxy.url });
      const first = await tiny.prompts.improve({ prompt: "a fox" });
      expect(first.rateLimit).toMatchObject({ limit: 1, remaining: 0 });
      const started = Date.now();
      const error = await rejection(tiny.prompts.improve({ prompt: "a fox" }));
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(error).toBeInstanceOf(RateLimitError);
      const limited = error as RateLimitError;
      expect(limited).toMatchObject({ status: 429, code: "RATE_LIMITED" });
      expect(limited.retryAfter).toBeGreaterThan(60);
      expect(limited.resetAt!.getTime()).toBeGreaterThan(Date.now() + 60_000);
      expect(limited.rateLimit).toMatchObject({ limit: 1, remaining: 0 });
      expect(posts()).toHaveLength(2);
    });

    it("403, 409 and 500 map to PermissionDeniedError, ConflictError and InternalServerError", async () => {
      const once = viaProxy({ maxRetries: 0 });
      proxy.queue({ kind: "status", status: 403, body: { code: "FORBIDDEN", message: "This key may not do that.", requestId: "r403" } });
      expect(await rejection(once.models.list())).toBeInstanceOf(PermissionDeniedError);
      proxy.queue({ kind: "status", status: 409, body: { code: "CONFLICT", message: "Still in flight.", requestId: "r409" } });
      const conflict = await rejection(once.models.list());
      expect(conflict).toBeInstanceOf(ConflictError);
      expect(conflict.requestId).toBe("r409");
      proxy.queue({ kind: "status", status: 500, headers: { "content-type": "text/plain" }, body: "boom" });
      const internal = await rejection(once.models.list());
      expect(internal).toBeInstanceOf(InternalServerError);
      expect(internal).toMatchObject({ status: 500, code: "HTTP_500", requestId: "proxy-fault" });
    });
  });

  describe("retries", () => {
    it("waits what a 429's Retry-After asks, then succeeds with the same Idempotency-Key", async () => {
      proxy.queue({ kind: "status", status: 429, headers: { "retry-after": "1" }, body: { code: "RATE_LIMITED", message: "Slow down.", requestId: "r" } });
      const started = Date.now();
      const result = await viaProxy().prompts.improve({ prompt: "a heron" });
      expect(result.original).toBe("a heron");
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      expect(posts()).toHaveLength(2);
      const keys = posts().map((request) => request.headers["idempotency-key"]);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
      expect(posts().map((request) => request.headers.prefer)).toEqual([undefined, "respond-async"]);
    });

    it("retries a 503 then succeeds, and a dropped connection then succeeds", async () => {
      proxy.queue({ kind: "status", status: 503 });
      const after503 = await viaProxy().tools.upscale({ image: png });
      expect(after503.data[0]).toMatchObject({ width: 48 });
      expect(posts()).toHaveLength(2);
      proxy.reset();
      proxy.queue({ kind: "drop" }, { kind: "drop" });
      const afterDrops = await viaProxy().tools.upscale({ image: png }, { idempotencyKey: "mine-1" });
      expect(afterDrops.data[0]).toMatchObject({ width: 48 });
      expect(posts().map((request) => request.headers["idempotency-key"])).toEqual(["mine-1", "mine-1", "mine-1"]);
    });

    it("gives up after maxRetries with an APIConnectionError", async () => {
      proxy.queue({ kind: "drop" }, { kind: "drop" }, { kind: "drop" });
      const error = await rejection(viaProxy({ maxRetries: 1 }).models.list());
      expect(error).toBeInstanceOf(APIConnectionError);
      expect(error.status).toBeUndefined();
      expect(proxy.seen).toHaveLength(2);
    });

    it("reports a server that is not there as an APIConnectionError", async () => {
      const closed = await startFaultProxy(service.url);
      const url = closed.url;
      await closed.close();
      const error = await rejection(new Atelier({ baseURL: url, maxRetries: 0 }).models.list());
      expect(error).toBeInstanceOf(APIConnectionError);
      expect(error.message).toMatch(/ECONNREFUSED/);
    });
  });

  describe("timeouts and cancellation", () => {
    it("times an attempt out with APITimeoutError, and retries a slow attempt", async () => {
      proxy.queue({ kind: "delay", ms: 1_500 });
      const started = Date.now();
      const error = await rejection(viaProxy({ timeout: 300, maxRetries: 0 }).models.list());
      expect(error).toBeInstanceOf(APITimeoutError);
      expect(Date.now() - started).toBeLessThan(1_200);
      proxy.reset();
      proxy.queue({ kind: "delay", ms: 1_500 });
      const result = await viaProxy({ timeout: 600, maxRetries: 1 }).models.list();
      expect(result.object).toBe("list");
      expect(proxy.seen).toHaveLength(2);
    });

    it("a per-request timeout overrides the client's", async () => {
      proxy.queue({ kind: "delay", ms: 1_500 });
      const error = await rejection(viaProxy().models.list({ timeout: 200, maxRetries: 0 }));
      expect(error).toBeInstanceOf(APITimeoutError);
    });

    it("an AbortSignal stops a call in flight and during a retry wait", async () => {
      proxy.queue({ kind: "delay", ms: 3_000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const started = Date.now();
      const error = await rejection(viaProxy().models.list({ signal: controller.signal }));
      expect(error).toBeInstanceOf(APIUserAbortError);
      expect(Date.now() - started).toBeLessThan(1_500);

      proxy.queue({ kind: "status", status: 503, headers: { "retry-after": "30" } });
      const waiting = new AbortController();
      setTimeout(() => waiting.abort(), 300);
      const during = await rejection(viaProxy().models.list({ signal: waiting.signal }));
      expect(during).toBeInstanceOf(APIUserAbortError);
      expect(proxy.seen.length).toBe(2);
    });
  });
});
