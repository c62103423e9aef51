/**
 * The `*Chunked` RPCs (transport/image-chunks.ts): the router's callChunked against a real server whose
 * chunked twin serves the unary work (workers/chunked-image-handler.ts), on loopback. Images of
 * sizes around a chunk's boundary arrive whole, progress arrives in order, streams that break the
 * chunking rules are refused with a status, and a worker without the chunked RPC gets the unary one.
 */
import crypto from "node:crypto";
import { credentials, makeGenericClientConstructor, Metadata, Server, ServerCredentials, status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { ERROR_CODE_METADATA_KEY } from "../../transport/grpc-errors.js";
import { IMAGE_CHUNK_BYTES } from "../../transport/image-chunks.js";
import { withImageCodecs } from "../../transport/image-message-codec.js";
import { createLogger } from "../../core/logger.js";
import {
  UpscaleRequest,
  UpscaleServiceClient,
  UpscaleServiceService,
  type UpscaleChunkedRequest,
  type UpscaleChunkedResponse,
  type UpscaleResponse,
} from "../../gen/atelier/upscale/v1/upscale_service.js";
import { callChunked, type UnaryMethod } from "../../server/workers/worker-clients.js";
import { unaryHandler } from "../../workers/grpc-handler.js";
import { reportProgress } from "../../workers/work-progress.js";
import { withChunkedTwins } from "../../workers/worker-server.js";

const logger = createLogger("silent");
const MAX_IMAGE_BYTES = 8 * 2 ** 20;
const Client = makeGenericClientConstructor(withImageCodecs(UpscaleServiceService), UpscaleServiceClient.serviceName) as unknown as typeof UpscaleServiceClient;

/** The work behind both RPCs: the image's bytes reversed, after two progress reports; `model: "fail"` refuses. */
async function reverse(request: UpscaleRequest): Promise<UpscaleResponse> {
  if (request.model === "fail") throw new AtelierError("IMAGE_UNDECODABLE", "Not an image.");
  reportProgress(1, 2, "tiles");
  reportProgress(2, 2, "tiles");
  const image = request.image && { data: Buffer.from(request.image.data).reverse(), mimeType: "image/webp", width: request.image.width + 1, height: 9 };
  return { image, model: request.model, scale: request.scale, nativeScale: 1, steps: [`${request.image?.data.length ?? "no"} bytes`] };
}
const implementation = { upscale: unaryHandler<UpscaleRequest, UpscaleResponse>(logger, "Upscale", reverse) };

const servers: Server[] = [];
const clients: InstanceType<typeof Client>[] = [];
async function serve(withTwins: boolean): Promise<InstanceType<typeof Client>> {
  const server = new Server();
  const served = withTwins ? withChunkedTwins({ definition: UpscaleServiceService, implementation }, logger, MAX_IMAGE_BYTES).implementation : implementation;
  server.addService(withImageCodecs(UpscaleServiceService), served);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  servers.push(server);
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  clients.push(client);
  return client;
}

let chunked: InstanceType<typeof Client>;
let unaryOnly: InstanceType<typeof Client>;
beforeAll(async () => {
  [chunked, unaryOnly] = await Promise.all([serve(true), serve(false)]);
});
afterAll(() => {
  clients.forEach((client) => client.close());
  servers.forEach((server) => server.forceShutdown());
});

const digest = (bytes: Uint8Array) => crypto.createHash("sha256").update(bytes).digest("hex");
const request = (bytes: number, model = "m") => UpscaleRequest.fromPartial({ image: { data: crypto.randomBytes(bytes), mimeType: "image/png", width: 3 }, scale: 2, model });

function call(client: InstanceType<typeof Client>, message: UpscaleRequest, progress: unknown[] = []) {
  return callChunked(client, client.upscaleChunked.bind(client), client.upscale.bind(client) as UnaryMethod<UpscaleRequest, UpscaleResponse>, message, {
    deadlineMs: 10_000,
    maxImageBytes: MAX_IMAGE_BYTES,
    onProgress: (...report) => progress.push(report),
  });
}

describe("chunked image calls", () => {
  it.each([0, 1, IMAGE_CHUNK_BYTES - 1, IMAGE_CHUNK_BYTES, IMAGE_CHUNK_BYTES + 1, 3 * IMAGE_CHUNK_BYTES + 7])("a %i-byte image arrives whole both ways, with the progress in order", async (bytes) => {
    const message = request(bytes);
    const progress: unknown[] = [];
    const answer = await call(chunked, message, progress);
    const expected = await reverse(message);
    expect({ ...answer, image: { ...answer.image, data: digest(answer.image!.data) } }).toEqual({ ...expected, image: { ...expected.image, data: digest(expected.image!.data) } });
    expect(progress).toEqual([
      [1, 2, "tiles"],
      [2, 2, "tiles"],
    ]);
  });

  it("carries a request without an image", async () => {
    const answer = await call(chunked, { ...request(1), image: undefined });
    expect(answer.steps).toEqual(["no bytes"]);
    expect(answer.image).toBeUndefined();
  });

  it("gives the work's refusal back as the same AtelierError", async () => {
    await expect(call(chunked, request(IMAGE_CHUNK_BYTES * 2, "fail"))).rejects.toMatchObject({ code: "IMAGE_UNDECODABLE", message: "Not an image." });
  });

  it("refuses an image over the worker's limit after its first chunk, while the rest is still being written", async () => {
    await expect(call(chunked, request(MAX_IMAGE_BYTES + 1))).rejects.toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    expect((await call(chunked, request(5))).steps).toEqual(["5 bytes"]);
  });

  it("calls a worker without the chunked RPC (UNIMPLEMENTED) over the unary one", async () => {
    const message = request(IMAGE_CHUNK_BYTES + 5);
    const progress: unknown[] = [];
    const answer = await call(unaryOnly, message, progress);
    expect(digest(answer.image!.data)).toBe(digest((await reverse(message)).image!.data));
    expect(progress).toEqual([]);
  });

  /** Sends `messages` as they are on a raw stream; the status it ends with. */
  function rawStream(messages: UpscaleChunkedRequest[]): Promise<{ code: number; atelierCode?: string; details: string }> {
    return new Promise((resolve) => {
      const stream = chunked.upscaleChunked(new Metadata(), { deadline: Date.now() + 10_000 });
      stream.on("data", (_message: UpscaleChunkedResponse) => {});
      stream.on("error", (error: ServiceError) => resolve({ code: error.code, atelierCode: error.metadata.get(ERROR_CODE_METADATA_KEY)[0]?.toString(), details: error.details }));
      stream.on("status", (status: { code: number; details: string }) => status.code === GrpcStatus.OK && resolve({ code: GrpcStatus.OK, details: status.details }));
      for (const message of messages) stream.write(message);
      stream.end();
    });
  }
  const head = UpscaleRequest.fromPartial({ image: { mimeType: "image/png" }, scale: 2, model: "m" });
  const bytes = (length: number) => crypto.randomBytes(length);

  it.each([
    ["no request first", [{ imageChunk: { totalBytes: 3, data: bytes(3) } }], "INVALID_INPUT", /first message must carry the request/],
    ["the request twice", [{ request: head, imageChunk: { totalBytes: 6, data: bytes(3) } }, { request: head, imageChunk: { totalBytes: 0, data: bytes(3) } }], "INVALID_INPUT", /request came twice/],
    ["more bytes than announced", [{ request: head, imageChunk: { totalBytes: 4, data: bytes(3) } }, { imageChunk: { totalBytes: 0, data: bytes(2) } }], "INVALID_INPUT", /more image bytes than the 4 announced/],
    ["fewer bytes than announced", [{ request: head, imageChunk: { totalBytes: 9, data: bytes(3) } }, { imageChunk: { totalBytes: 0, data: bytes(2) } }], "INVALID_INPUT", /5 of the 9 image bytes/],
    ["a length announced twice", [{ request: head, imageChunk: { totalBytes: 9, data: bytes(3) } }, { imageChunk: { totalBytes: 9, data: bytes(6) } }], "INVALID_INPUT", /announced twice/],
    ["a length over the limit", [{ request: head, imageChunk: { totalBytes: MAX_IMAGE_BYTES + 1, data: bytes(3) } }], "PAYLOAD_TOO_LARGE", /over the limit/],
    ["bytes in the request and as chunks", [{ request: { ...head, image: { ...head.image!, data: bytes(2) } }, imageChunk: { totalBytes: 3, data: bytes(3) } }], "INVALID_INPUT", /both in the message and as chunks/],
    ["nothing at all", [], "INVALID_INPUT", /no request came/],
  ] as const)("refuses a stream with %s", async (_name, messages, atelierCode, details) => {
    const outcome = await rawStream(messages as unknown as UpscaleChunkedRequest[]);
    expect(outcome.atelierCode).toBe(atelierCode);
    expect(outcome.details).toMatch(details);
  });

  it("still serves after the refusals, and takes the image's bytes inline in the request too", async () => {
    expect((await rawStream([{ request: { ...head, image: { ...head.image!, data: bytes(5) } } }])).code).toBe(GrpcStatus.OK);
    expect((await call(chunked, request(10))).steps).toEqual(["10 bytes"]);
  });
});
