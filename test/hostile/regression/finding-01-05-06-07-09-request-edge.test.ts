/**
 * The request edge, where the body is read (one service for the file):
 * - finding 1: a ~10 kB body nested 5000 deep answered 500 before authentication, with requestId
 *   "unknown" in the body;
 * - finding 5: malformed JSON over tRPC answered 500 where REST answers 400;
 * - finding 6: bodies were read and parsed before the key was checked (20 unauthenticated 39 MB
 *   bodies took the process from 0.6 to 3 GB);
 * - finding 7: HEAD answered 404 where GET answers 200;
 * - finding 9: `APPLICATION/JSON` and `charset=UTF-8` variants were refused, other charsets gave 400.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../../support/test-service.js";

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService({ ATELIER_MAX_CONCURRENT_LARGE_BODIES: "2" });
  key = await service.createKey("edge", 10_000);
});
afterAll(() => service?.close());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Bytes of the request body the client managed to send before the answer. */
  sent: number;
}

/** A raw request, so headers and bodies can be anything; `body` may be streamed in pieces. */
function send(method: string, path: string, headers: Record<string, string | number>, body?: Buffer | (() => AsyncGenerator<Buffer>)): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    const request = http.request({ host: "127.0.0.1", port: service.port, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString(), sent }));
    });
    request.on("error", (error) => (sent > 0 ? undefined : reject(error)));
    if (body === undefined) return void request.end();
    if (Buffer.isBuffer(body)) {
      sent = body.length;
      return void request.end(body);
    }
    void (async () => {
      for await (const chunk of body()) {
        if (request.destroyed) return;
        sent += chunk.length;
        if (!request.write(chunk)) await new Promise((resolve) => request.once("drain", resolve));
      }
      request.end();
    })().catch(() => {});
  });
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const nested = (depth: number) => Buffer.from(`{"prompt":"x","a":${"[".repeat(depth)}${"]".repeat(depth)}}`);
const POST_PATHS = ["/api/v1/prompt/improve", "/api/v1/tools/upscale", "/api/v1/generate", "/trpc/prompt.improve"];

describe("finding 1: deep nesting", () => {
  for (const path of POST_PATHS) {
    it(`answers 400 for 5000-deep JSON on ${path}, with the request id in the body, key or not`, async () => {
      for (const auth of [{}, { authorization: `Bearer ${key}` }] as Record<string, string>[]) {
        const answer = await send("POST", path, { "content-type": "application/json", ...auth }, nested(5000));
        expect(answer.status, answer.body).toBeLessThan(500);
        if (Object.keys(auth).length > 0) {
          expect(answer.status).toBe(400);
          const parsed = JSON.parse(answer.body) as { code: string; requestId: string; message: string; error?: { data: { code: string; requestId: string; message: string } } };
          // REST's shape, or tRPC's (the same fields under error.data).
          const body = parsed.error?.data ?? parsed;
          expect(body.code).toBe("INVALID_INPUT");
          expect(body.message).toMatch(/nested/);
          expect(body.requestId).toBe(answer.headers["x-request-id"]);
        } else expect(answer.status).toBe(401);
      }
    });
  }
});

describe("finding 5: malformed JSON over tRPC", () => {
  it("answers 400 MALFORMED_JSON on /trpc as on REST", async () => {
    for (const path of ["/trpc/prompt.improve", "/api/v1/prompt/improve"]) {
      const answer = await send("POST", path, { "content-type": "application/json", authorization: `Bearer ${key}` }, Buffer.from('{"prompt":'));
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      expect(answer.body).toContain("MALFORMED_JSON");
    }
  });
});

describe("finding 6: authentication before the body", () => {
  it("answers 401 to an unauthenticated 30 MB body having read almost none of it", async () => {
    const size = 30 * 1024 * 1024;
    const answer = await send("POST", "/api/v1/tools/upscale", { "content-type": "application/json", "content-length": size }, async function* () {
      for (let i = 0; i < size / 65536; i++) yield Buffer.alloc(65536, 0x20);
    });
    expect(answer.status).toBe(401);
    expect(answer.sent).toBeLessThan(size / 2);
  });

  it("answers 401 on /trpc too, and 429 from the headers when the key's quota is spent", async () => {
    const trpc = await send("POST", "/trpc/tools.upscale", { "content-type": "application/json" }, json({ imageUrl: "data:," }));
    expect(trpc.status).toBe(401);
    const spent = await service.createKey("spent", 1);
    expect((await service.post("/prompt/improve", { prompt: "a cat" }, spent)).status).toBe(200);
    const answer = await send("POST", "/api/v1/prompt/improve", { "content-type": "application/json", authorization: `Bearer ${spent}`, "content-length": 10_000_000 }, async function* () {
      for (let i = 0; i < 150; i++) yield Buffer.alloc(65536, 0x20);
    });
    expect(answer.status).toBe(429);
    expect(Number(answer.headers["retry-after"])).toBeGreaterThan(0);
  });

  it("refuses a declared length over the limit with 413 before reading it", async () => {
    const answer = await send("POST", "/api/v1/tools/upscale", { "content-type": "application/json", authorization: `Bearer ${key}`, "content-length": 2 ** 31 }, async function* () {
      yield Buffer.alloc(1024, 0x20);
    });
    expect(answer.status).toBe(413);
  });

  it("lets at most ATELIER_MAX_CONCURRENT_LARGE_BODIES large bodies be read at once; the next gets 503 with Retry-After", async () => {
    const size = 4 * 1024 * 1024;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = () =>
      send("POST", "/api/v1/prompt/improve", { "content-type": "application/json", authorization: `Bearer ${key}`, "content-length": size }, async function* () {
        yield Buffer.alloc(65536, 0x20);
        await gate;
        for (let i = 1; i < size / 65536; i++) yield Buffer.alloc(65536, 0x20);
      });
    const held = [slow(), slow()];
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Without the cap the third body would wait for the gate too: open it after a while regardless.
    const safety = setTimeout(release, 3000);
    const third = await slow();
    clearTimeout(safety);
    expect(third.status).toBe(503);
    expect(Number(third.headers["retry-after"])).toBeGreaterThan(0);
    release();
    // The held bodies are whitespace: read in full, they are not JSON objects (400), never a 5xx.
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([400, 400]);
  });
});

describe("finding 7: HEAD mirrors GET", () => {
  for (const path of ["/api/v1/models", "/api/v1/openapi.json", "/trpc/models.list", "/api/v1/no-such-thing", "/"]) {
    it(`HEAD ${path} has GET's status and headers, and no body`, async () => {
      const get = await send("GET", path, {});
      const head = await send("HEAD", path, {});
      expect(head.status).toBe(get.status);
      expect(head.headers["content-type"]).toBe(get.headers["content-type"]);
      expect(head.body).toBe("");
    });
  }
});

describe("finding 9: content types", () => {
  const accepted = ["APPLICATION/JSON", "application/json; charset=UTF-8", 'Application/Json;Charset="utf-8"', "application/json;charset=utf8"];
  for (const type of accepted) {
    it(`accepts ${JSON.stringify(type)} on REST and tRPC`, async () => {
      for (const path of ["/api/v1/prompt/improve", "/trpc/prompt.improve"]) {
        const answer = await send("POST", path, { "content-type": type, authorization: `Bearer ${key}` }, json({ prompt: "a cat" }));
        expect({ path, status: answer.status }).toEqual({ path, status: 200 });
      }
    });
  }
  const refused = ["application/json; charset=utf-16", "application/json; charset=latin1", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"];
  for (const type of refused) {
    it(`refuses ${JSON.stringify(type)} with 415 and a clear message`, async () => {
      for (const path of ["/api/v1/prompt/improve", "/trpc/prompt.improve"]) {
        const answer = await send("POST", path, { "content-type": type, authorization: `Bearer ${key}` }, json({ prompt: "a cat" }));
        expect({ path, status: answer.status }).toEqual({ path, status: 415 });
        expect(answer.body).toMatch(/application\/json/);
        expect(answer.body).toMatch(/UTF-8/);
      }
    });
  }
});
