/**
 * Every image operation with its image sent as a file (`multipart/form-data`, facade/multipart-body.ts)
 * against a real service on loopback: the answer is the JSON request's (the same image bytes back,
 * the same job, the same Idempotency-Key fingerprint), text fields are read as their JSON types, a
 * wrong key or a spent quota is refused before the upload is sent, and the limits and malformed forms
 * get their JSON errors.
 */
import { randomBytes } from "node:crypto";
import net from "node:net";
import fc from "fast-check";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

const modelsFolder = fileTempDir("test-models");

/** Two image files (background removal takes a second one) are over the body limit together. */
const MAX_IMAGE_BYTES = 1536 * 1024;
const MAX_BODY_BYTES = 2048 * 1024;

let service: TestService;
let key: string;
let photo: Buffer;
/** Over the upload reader's piece size, so the data URL is made of several pieces. */
let noisy: Buffer;

/** A PNG of `side` x `side` random pixels (it does not compress). */
function noisePng(side: number): Promise<Buffer> {
  return sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } }).png().toBuffer();
}

beforeAll(async () => {
  const modelsDir = await installModels(modelsFolder, ["mathura", "portrait-selfie"]);
  service = await startTestService({
    ATELIER_MODELS_DIR: modelsDir,
    ATELIER_MAX_IMAGE_BYTES: String(MAX_IMAGE_BYTES),
    ATELIER_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    ATELIER_MAX_CONCURRENT_LARGE_BODIES: "1",
  });
  key = await service.createKey("uploads", 10_000);
  photo = await gradientPng(24, 16);
  noisy = await noisePng(240);
  expect(noisy.length).toBeGreaterThan(3 * 48 * 1024);
}, 300_000);
afterAll(async () => {
  await service?.close();
});

type Fields = Record<string, string | Buffer>;

function form(fields: Fields): FormData {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === "string") body.append(name, value);
    else body.append(name, new Blob([value]), `${name}.bin`);
  }
  return body;
}

function postForm(path: string, fields: Fields, headers: Record<string, string> = {}, bearer = key): Promise<Response> {
  return fetch(`${service.url}/api/v1${path}`, { method: "POST", headers: { authorization: `Bearer ${bearer}`, ...headers }, body: form(fields) });
}

interface ImageAnswer {
  model: string;
  data: { url: string; mimeType: string; width: number; height: number }[];
  [field: string]: unknown;
}

async function answerOf(response: Response): Promise<ImageAnswer> {
  const body = (await response.json()) as ImageAnswer;
  expect(response.status, JSON.stringify(body).slice(0, 300)).toBe(200);
  return body;
}

interface ErrorBody {
  code: string;
  message: string;
  issues?: { path: string; message: string }[];
}

async function errorOf(response: Response, status: number, code: string): Promise<ErrorBody> {
  const body = (await response.json()) as ErrorBody;
  expect([response.status, body.code], body.message).toEqual([status, code]);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return body;
}

describe("each image operation takes its image as a file", () => {
  it("upscale answers as for the same image in a data URL", async () => {
    const upload = await answerOf(await postForm("/tools/upscale", { image: noisy, scale: "2", model: "lanczos" }));
    const json = await answerOf(await service.post("/tools/upscale", { imageUrl: dataUrl(noisy), scale: 2, model: "lanczos" }, key));
    expect(upload).toMatchObject({ model: "lanczos", scale: 2, data: [{ width: 480, height: 480 }] });
    expect(upload.data[0]!.url).toBe(json.data[0]!.url);
  });

  it("style transfer answers as for the same image in a data URL, its number and flag fields read as JSON", async () => {
    const upload = await answerOf(await postForm("/tools/style-transfer", { image: photo, style: "mathura", strength: "0.8", preserveColors: "true" }));
    const json = await answerOf(await service.post("/tools/style-transfer", { imageUrl: dataUrl(photo), style: "mathura", strength: 0.8, preserveColors: true }, key));
    expect(upload).toMatchObject({ style: "mathura", data: [{ width: 24, height: 16 }] });
    expect(upload.data[0]!.url).toBe(json.data[0]!.url);
  });

  it("background removal takes the replacement as text or as a second file", async () => {
    const onWhite = await answerOf(await postForm("/tools/background-remove", { image: photo, replacement: "white", model: "portrait-selfie", outputFormat: "webp" }));
    expect(onWhite).toMatchObject({ replacement: "color:#ffffff", data: [{ mimeType: "image/webp", width: 24, height: 16 }] });
    const backdrop = await gradientPng(8, 8);
    const upload = await answerOf(await postForm("/tools/background-remove", { image: photo, replacement: backdrop, model: "portrait-selfie" }));
    const json = await answerOf(await service.post("/tools/background-remove", { imageUrl: dataUrl(photo), replacement: dataUrl(backdrop), model: "portrait-selfie" }, key));
    expect(upload.replacement).toBe("image");
    expect(upload.data[0]!.url).toBe(json.data[0]!.url);
  });

  it("runs as a job with Prefer: respond-async, and is the JSON request to Idempotency-Key", async () => {
    const accepted = await postForm("/tools/upscale", { image: photo, scale: "2" }, { prefer: "respond-async", "idempotency-key": "upload-1" });
    expect(accepted.status).toBe(202);
    const job = (await accepted.json()) as { id: string };
    let state = { status: "queued", result: undefined as ImageAnswer | undefined };
    for (const deadline = Date.now() + 60_000; !["succeeded", "failed", "canceled"].includes(state.status) && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = (await (await fetch(`${service.url}/api/v1/jobs/${job.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as typeof state;
    }
    expect(state.status).toBe("succeeded");
    const json = await answerOf(await service.post("/tools/upscale", { imageUrl: dataUrl(photo), scale: 2 }, key));
    expect(state.result!.data[0]!.url).toBe(json.data[0]!.url);
    // The same request in JSON, with the same key: a replay of that job, not a different request.
    const replay = await service.post("/tools/upscale", { imageUrl: dataUrl(photo), scale: 2 }, key, { prefer: "respond-async", "idempotency-key": "upload-1" });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(((await replay.json()) as { id: string }).id).toBe(job.id);
  });

  it("answers with the raw image for Accept: image/png", async () => {
    const response = await postForm("/tools/upscale", { image: photo }, { accept: "image/png" });
    expect([response.status, response.headers.get("content-type")]).toEqual([200, "image/png"]);
    expect((await sharp(Buffer.from(await response.arrayBuffer())).metadata()).width).toBe(48);
  });
});

describe("form fields", () => {
  it.each([
    [{ scale: "nine" }, "scale", /Expected integer between 2 and 8 for scale but received "nine"/],
    [{ scale: "9" }, "scale", /Expected integer between 2 and 8 for scale but received 9/],
    [{ scale: "2.5" }, "scale", /integer/],
    [{ model: "Bad Model" }, "model", /model id/],
    [{ outputFormat: "gif" }, "outputFormat", /png, jpeg, webp/],
  ])("validates %j as the JSON field", async (fields, path, message) => {
    const body = await errorOf(await postForm("/tools/upscale", { image: photo, ...fields }), 400, "INVALID_INPUT");
    expect(body.issues?.find((issue) => issue.path === path)?.message).toMatch(message);
  });

  it("reads flags as JSON booleans only", async () => {
    const body = await errorOf(await postForm("/tools/background-remove", { image: photo, onlyMask: "yes", model: "portrait-selfie" }), 400, "INVALID_INPUT");
    expect(body.message).toMatch(/Expected true or false for onlyMask but received "yes"/);
    const mask = await answerOf(await postForm("/tools/background-remove", { image: photo, onlyMask: "true", model: "portrait-selfie" }));
    expect(mask.replacement).toBe("none");
  });
});

/**
 * Sends only the head of a request that declares a large multipart body, and reads the answer:
 * the body is never sent, so an answer proves the server gave it from the headers alone.
 */
function headOnly(path: string, bearer: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(service.port, "127.0.0.1");
    let received = "";
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 10 s; received ${JSON.stringify(received)}`));
    }, 10_000);
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      const end = received.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(received)?.[1]);
      if (end >= 0 && received.length >= end + 4 + length) {
        clearTimeout(giveUp);
        socket.destroy();
        resolve(received);
      }
    });
    socket.write(
      `POST /api/v1${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bearer}\r\n` +
        `Content-Type: multipart/form-data; boundary=----upload\r\nContent-Length: ${MAX_BODY_BYTES - 1000}\r\n\r\n`,
    );
  });
}

describe("refusals before the upload is read", () => {
  it("answers a wrong key with 401 before the body is sent", async () => {
    const answer = await headOnly("/tools/upscale", "atl_aaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toContain('"code":"UNAUTHORIZED"');
  });

  it("answers a spent quota with 429 before the body is sent", async () => {
    const spent = await service.createKey("spent", 1);
    await answerOf(await postForm("/tools/upscale", { image: photo }, {}, spent));
    const answer = await headOnly("/tools/style-transfer", spent);
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    expect(answer).toContain('"code":"RATE_LIMITED"');
  });

  it("answers a declared body over ATELIER_MAX_BODY_BYTES with 413 before it is sent", async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(service.port, "127.0.0.1");
      let received = "";
      socket.on("error", () => {});
      socket.on("data", (chunk: Buffer) => {
        received += chunk.toString("latin1");
        if (received.includes('"requestId"')) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.write(`POST /api/v1/tools/upscale HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n`);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"code":"PAYLOAD_TOO_LARGE"');
  });
});

describe("limits", () => {
  /** A file that starts as a PNG, so it passes the signature check and reaches the size limit. */
  const pngOf = (bytes: number) => Buffer.concat([photo, Buffer.alloc(bytes - photo.length, 7)]);

  it("answers an image file over ATELIER_MAX_IMAGE_BYTES with 413 IMAGE_TOO_LARGE", async () => {
    const body = await errorOf(await postForm("/tools/upscale", { image: pngOf(MAX_IMAGE_BYTES + 1) }), 413, "IMAGE_TOO_LARGE");
    expect(body.message).toMatch(new RegExp(`part "image" is larger than the limit of ${MAX_IMAGE_BYTES} bytes \\(ATELIER_MAX_IMAGE_BYTES\\)`));
  });

  it("accepts an image file of exactly ATELIER_MAX_IMAGE_BYTES", async () => {
    // The PNG decoder stops at the image's end: the padding after it is ignored.
    expect((await answerOf(await postForm("/tools/upscale", { image: pngOf(MAX_IMAGE_BYTES) }))).data[0]).toMatchObject({ width: 48, height: 32 });
  });

  it("stops reading a body without a declared length at ATELIER_MAX_BODY_BYTES", async () => {
    // Two files under the image limit each, together over the body limit, sent in chunks.
    const boundary = "----limit";
    const part = (name: string) => Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\n\r\n`), pngOf(MAX_IMAGE_BYTES - 10), Buffer.from("\r\n")]);
    const whole = Buffer.concat([part("image"), part("replacement"), Buffer.from(`--${boundary}--\r\n`)]);
    expect(whole.length).toBeGreaterThan(MAX_BODY_BYTES);
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < whole.length; at += 64 * 1024) controller.enqueue(whole.subarray(at, at + 64 * 1024));
        controller.close();
      },
    });
    const response = await fetch(`${service.url}/api/v1/tools/background-remove`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": `multipart/form-data; boundary=${boundary}` },
      body: chunks,
      duplex: "half",
    } as RequestInit);
    expect((await errorOf(response, 413, "PAYLOAD_TOO_LARGE")).message).toMatch(new RegExp(`limit of ${MAX_BODY_BYTES} bytes \\(ATELIER_MAX_BODY_BYTES\\)`));
  });

  it("shares the places for large bodies (over 1 MiB) with JSON bodies", async () => {
    // A JSON upload of 1.5 MB holds the one place from its `100 Continue` (sent as it starts reading) until it closes.
    const holder = net.connect(service.port, "127.0.0.1");
    holder.on("error", () => {});
    const reading = new Promise<void>((resolve) => holder.on("data", (chunk: Buffer) => chunk.toString("latin1").includes("100 Continue") && resolve()));
    holder.write(`POST /api/v1/tools/upscale HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1500000\r\nExpect: 100-continue\r\n\r\n`);
    await reading;
    const large = pngOf(1_200_000);
    const refused = await postForm("/tools/upscale", { image: large });
    expect((await errorOf(refused, 503, "OVERLOADED")).message).toMatch(/ATELIER_MAX_CONCURRENT_LARGE_BODIES/);
    expect(refused.headers.get("retry-after")).toBe("1");
    const closed = new Promise((resolve) => holder.once("close", resolve));
    holder.destroy();
    await closed;
    for (const deadline = Date.now() + 10_000; ; ) {
      const response = await postForm("/tools/upscale", { image: large });
      if (response.status !== 503 || Date.now() > deadline) {
        await answerOf(response);
        break;
      }
    }
  });

  it("gives the place for a large body back when it refuses the form from its headers", async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const refused = await new Promise<string>((resolve) => {
        const socket = net.connect(service.port, "127.0.0.1");
        let received = "";
        socket.on("error", () => {});
        socket.on("data", (chunk: Buffer) => {
          received += chunk.toString("latin1");
          if (received.includes('"requestId"')) {
            socket.destroy();
            resolve(received);
          }
        });
        socket.write(`POST /api/v1/tools/upscale HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data\r\nContent-Length: 1500000\r\n\r\n`);
      });
      expect(refused).toMatch(/^HTTP\/1\.1 400 [\s\S]*"code":"MALFORMED_MULTIPART"/);
    }
    // The one place (ATELIER_MAX_CONCURRENT_LARGE_BODIES=1) is free for the next large body.
    await answerOf(await postForm("/tools/upscale", { image: pngOf(1_200_000) }));
  });

  it("answers a text field over 16 KiB with 400 naming it", async () => {
    const body = await errorOf(await postForm("/tools/background-remove", { image: photo, replacement: "a".repeat(17 * 1024) }), 400, "INVALID_INPUT");
    expect(body.issues).toEqual([{ path: "replacement", message: expect.stringMatching(/at most 16384 bytes/) as unknown }]);
  });
});

describe("malformed forms", () => {
  const upscaleTakes = "This operation takes the file part image and the fields scale, model, quality, outputFormat, webhookUrl";

  // Fields made from the photo when the case runs (the table is read before the photo is made).
  it.each<[string, (png: Buffer) => Fields, number, string, RegExp]>([
    ["an unexpected file part", (png) => ({ image: png, photo: png }), 400, "MALFORMED_MULTIPART", new RegExp(`^Unexpected file part "photo"\\. ${upscaleTakes}\\.$`)],
    ["an unexpected field", (png) => ({ image: png, size: "2" }), 400, "MALFORMED_MULTIPART", /^Unexpected field "size"\. This operation takes/],
    ["the JSON field imageUrl", (png) => ({ imageUrl: dataUrl(png) }), 400, "MALFORMED_MULTIPART", /^Unexpected field "imageUrl"/],
    ["the image as text", () => ({ image: "photo.png" }), 400, "MALFORMED_MULTIPART", /"image" is a file part: send the file itself \(with curl, -F image=@photo\.png\)/],
    ["no image", () => ({ scale: "2" }), 400, "INVALID_INPUT", /Expected the image as a file part named "image"/],
    ["a file that is no image", () => ({ image: Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>") }), 422, "IMAGE_UNDECODABLE", /part "image" is not an image in a format this server accepts/],
    ["an empty file", () => ({ image: Buffer.alloc(0) }), 422, "IMAGE_UNDECODABLE", /part "image" is empty/],
  ])("answers %s", async (_what, fields, status, code, message) => {
    const body = await errorOf(await postForm("/tools/upscale", fields(photo)), status, code);
    expect(body.message).toMatch(message);
  });

  it("answers a part sent twice with 400", async () => {
    const twice = new FormData();
    twice.append("image", new Blob([photo]), "a.png");
    twice.append("scale", "2");
    twice.append("scale", "3");
    const response = await fetch(`${service.url}/api/v1/tools/upscale`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: twice });
    expect((await errorOf(response, 400, "MALFORMED_MULTIPART")).message).toMatch(/The part "scale" is sent twice/);
  });

  it.each([
    ["no boundary", "multipart/form-data", "--x\r\n", /^The multipart\/form-data Content-Type has no boundary parameter/],
    ["a body cut off", "multipart/form-data; boundary=x", `--x\r\nContent-Disposition: form-data; name="scale"\r\n\r\n2`, /^The multipart\/form-data body cannot be read: Unexpected end of form\.$/],
    ["a field without a name", "multipart/form-data; boundary=x", `--x\r\nContent-Disposition: form-data\r\n\r\n2\r\n--x--\r\n`, /^Unexpected field without a name\. This operation takes/],
    ["a file without a name", "multipart/form-data; boundary=x", `--x\r\nContent-Disposition: form-data; filename="a.png"\r\n\r\n2\r\n--x--\r\n`, /^Unexpected file part without a name\. This operation takes/],
  ])("answers %s with 400 MALFORMED_MULTIPART", async (_what, type, text, message) => {
    const response = await fetch(`${service.url}/api/v1/tools/upscale`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": type }, body: text });
    expect((await errorOf(response, 400, "MALFORMED_MULTIPART")).message).toMatch(message);
  });

  it("refuses another media type on an image operation with a 415 naming both, and a form where no image is taken", async () => {
    const other = await fetch(`${service.url}/api/v1/tools/upscale`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "text/plain" }, body: "x" });
    expect((await errorOf(other, 415, "UNSUPPORTED_MEDIA_TYPE")).message).toMatch(/application\/json.*multipart\/form-data.*received Content-Type text\/plain/);
    const prompt = await postForm("/prompt/improve", { prompt: "a cat" });
    expect((await errorOf(prompt, 415, "UNSUPPORTED_MEDIA_TYPE")).message).toMatch(/application\/json/);
  });

  it("answers any form, however mangled, in JSON with a status of its own, and never falls over", async () => {
    const part = fc.record({
      name: fc.constantFrom<string | undefined>("image", "replacement", "scale", "onlyMask", "x", "", undefined),
      filename: fc.option(fc.constantFrom("a.png", "", "../../etc/passwd", "\u00e9.png"), { nil: undefined }),
      content: fc.oneof(fc.constant(photo), fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)), fc.constantFrom(Buffer.from("2"), Buffer.from("true"))),
    });
    const form = fc.record({
      path: fc.constantFrom("/tools/upscale", "/tools/background-remove", "/tools/style-transfer"),
      parts: fc.array(part, { maxLength: 4 }),
      cut: fc.option(fc.nat(), { nil: undefined }),
      noise: fc.option(fc.uint8Array({ minLength: 1, maxLength: 40 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(form, async ({ path, parts, cut, noise }) => {
        const pieces = parts.flatMap(({ name, filename, content }) => {
          const disposition = ["form-data", ...(name === undefined ? [] : [`name="${name}"`]), ...(filename === undefined ? [] : [`filename="${filename}"`])].join("; ");
          return [Buffer.from(`--b\r\nContent-Disposition: ${disposition}\r\n\r\n`), content, Buffer.from("\r\n")];
        });
        let body = Buffer.concat([...pieces, Buffer.from("--b--\r\n")]);
        if (noise) body = Buffer.concat([body.subarray(0, (cut ?? 0) % (body.length + 1)), Buffer.from(noise), body.subarray((cut ?? 0) % (body.length + 1))]);
        else if (cut !== undefined) body = body.subarray(0, cut % (body.length + 1));
        const response = await fetch(`${service.url}/api/v1${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "multipart/form-data; boundary=b" },
          body,
        });
        const answer = (await response.json()) as { code?: string };
        expect([200, 400, 413, 422, 503]).toContain(response.status);
        if (response.status !== 200) expect(answer.code).toMatch(/^[A-Z_]+$/);
      }),
      { numRuns: 60, seed: 11 },
    );
  }, 120_000);

  it("keeps serving after every refusal", async () => {
    await answerOf(await postForm("/tools/upscale", { image: photo }));
  });
});
