import crypto from "node:crypto";
import { describe, expect, it } from "vitest";
import { deserializeWithImage, IMAGE_MESSAGES, LARGE_IMAGE_BYTES, serializeWithImage, withImageCodecs } from "../../transport/image-message-codec.js";
import { BackgroundServiceService, RemoveBackgroundRequest } from "../../gen/atelier/background/v1/background_service.js";
import { GenerationServiceService } from "../../gen/atelier/generation/v1/generation_service.js";
import { StyleTransferServiceService } from "../../gen/atelier/style/v1/style_transfer_service.js";
import { UpscaleChunkedRequest, UpscaleChunkedResponse, UpscaleQuality, UpscaleRequest, UpscaleResponse, UpscaleServiceService } from "../../gen/atelier/upscale/v1/upscale_service.js";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";

const generatedSerialize = (value: UpscaleRequest) => Buffer.from(UpscaleRequest.encode(value).finish());
const serialize = serializeWithImage(generatedSerialize as never) as (value: UpscaleRequest) => Buffer;
const deserialize = deserializeWithImage((bytes) => UpscaleRequest.decode(bytes));

function request(bytes: number): UpscaleRequest {
  return {
    image: { data: crypto.randomBytes(bytes), mimeType: "image/png", width: 4000, height: 3000 },
    scale: 3,
    model: "espcn-x3",
    outputFormat: OutputFormat.OUTPUT_FORMAT_WEBP,
    quality: UpscaleQuality.UPSCALE_QUALITY_UNSPECIFIED,
  };
}

/** A chunked message with its chunk's bytes as a hex digest. */
function comparableChunk(message: unknown): unknown {
  const { imageChunk, ...rest } = message as { imageChunk?: { data: Uint8Array } };
  return { ...(comparable(rest) as object), imageChunk: imageChunk && { ...imageChunk, data: crypto.createHash("sha256").update(imageChunk.data).digest("hex") } };
}

/** `message` with its image bytes as a hex digest (vitest compares megabytes of bytes one by one, slowly). */
function comparable(message: unknown): unknown {
  const { image, ...rest } = message as { image?: { data: Uint8Array } };
  return { ...rest, image: image && { ...image, data: crypto.createHash("sha256").update(image.data).digest("hex") } };
}

describe("image message codec", () => {
  it("writes a large image in one copy that the generated decoder reads as the same message", () => {
    const message = request(3 * 2 ** 20);
    const written = serialize(message);
    expect(written.length).toBe(generatedSerialize(message).length);
    expect(comparable(UpscaleRequest.decode(written))).toEqual(comparable(message));
  });

  it("reads a large image as a view of the received bytes, the other fields as the generated decoder does", () => {
    for (const bytes of [generatedSerialize(request(LARGE_IMAGE_BYTES)), serialize(request(2 * 2 ** 20))]) {
      const read = deserialize(bytes) as UpscaleRequest;
      expect(comparable(read)).toEqual(comparable(UpscaleRequest.decode(bytes)));
      expect(read.image!.data.buffer).toBe(bytes.buffer);
    }
  });

  it("leaves small images, absent images and repeated image fields to the generated code", () => {
    const small = request(LARGE_IMAGE_BYTES - 1);
    expect(serialize(small).equals(generatedSerialize(small))).toBe(true);
    const none = { ...request(1), image: undefined };
    expect(comparable(deserialize(generatedSerialize(none)))).toEqual(comparable(UpscaleRequest.decode(generatedSerialize(none))));
    // Two image fields: the generated decoder keeps the last; so must the codec.
    const twice = Buffer.concat([generatedSerialize(request(LARGE_IMAGE_BYTES)), generatedSerialize(request(LARGE_IMAGE_BYTES))]);
    expect(comparable(deserialize(twice))).toEqual(comparable(UpscaleRequest.decode(twice)));
  });

  it("fails on truncated or malformed bytes as the generated decoder does", () => {
    const whole = serialize(request(LARGE_IMAGE_BYTES * 2));
    for (const broken of [whole.subarray(0, whole.length - 1), whole.subarray(0, 20), Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), Buffer.from([0x0f])]) {
      expect(() => UpscaleRequest.decode(broken)).toThrow();
      expect(() => deserialize(broken)).toThrow();
    }
  });

  it("writes and reads the chunked RPCs' image chunks the same way", () => {
    const codec = withImageCodecs(UpscaleServiceService).upscaleChunked;
    expect(codec.requestSerialize).not.toBe(UpscaleServiceService.upscaleChunked.requestSerialize);
    const first: UpscaleChunkedRequest = { request: { ...request(0), image: { ...request(0).image!, data: Buffer.alloc(0) } }, imageChunk: { totalBytes: 3 * 2 ** 20, data: crypto.randomBytes(LARGE_IMAGE_BYTES) } };
    const written = codec.requestSerialize(first);
    expect(written.length).toBe(Buffer.from(UpscaleChunkedRequest.encode(first).finish()).length);
    const read = codec.requestDeserialize(written);
    expect(comparableChunk(read)).toEqual(comparableChunk(UpscaleChunkedRequest.decode(written)));
    expect(comparableChunk(read)).toEqual(comparableChunk(first));
    expect(read.imageChunk!.data.buffer).toBe(written.buffer);
    const answer: UpscaleChunkedResponse = { step: 4, totalSteps: 4, stage: "", response: undefined, imageChunk: { totalBytes: 0, data: crypto.randomBytes(LARGE_IMAGE_BYTES + 1) } };
    const back = codec.responseDeserialize(codec.responseSerialize(answer));
    expect(comparableChunk(back)).toEqual(comparableChunk(answer));
    expect(comparableChunk(UpscaleChunkedResponse.decode(codec.responseSerialize(answer)))).toEqual(comparableChunk(answer));
  });

  it("covers, in both directions, each method whose message carries image bytes", () => {
    const definitions = [UpscaleServiceService, StyleTransferServiceService, BackgroundServiceService, GenerationServiceService];
    const paths = definitions.flatMap((definition) => Object.values(definition).map((method) => method.path as string));
    expect(paths).toEqual(expect.arrayContaining(Object.keys(IMAGE_MESSAGES)));
    const background = withImageCodecs(BackgroundServiceService).removeBackground;
    const message: RemoveBackgroundRequest = { ...RemoveBackgroundRequest.fromPartial({ model: "portrait-selfie", onlyMask: true }), image: request(LARGE_IMAGE_BYTES).image };
    const written = background.requestSerialize(message);
    expect(background.requestSerialize).not.toBe(BackgroundServiceService.removeBackground.requestSerialize);
    expect(comparable(background.requestDeserialize(written))).toEqual(comparable(message));
    expect(comparable(RemoveBackgroundRequest.decode(written))).toEqual(comparable(message));
    // Generate's request has a prompt in field 1: its codec must stay the generated one.
    expect(withImageCodecs(GenerationServiceService).generate.requestDeserialize).toBe(GenerationServiceService.generate.requestDeserialize);
    expect(withImageCodecs(UpscaleServiceService).upscale.responseDeserialize).not.toBe(UpscaleServiceService.upscale.responseDeserialize);
    const answer: UpscaleResponse = UpscaleResponse.fromPartial({ image: request(LARGE_IMAGE_BYTES).image, model: "espcn-x3", scale: 3, nativeScale: 3, steps: ["espcn-x3 x3"] });
    const codec = withImageCodecs(UpscaleServiceService).upscale;
    expect(comparable(codec.responseDeserialize(codec.responseSerialize(answer)))).toEqual(comparable(answer));
  });
});
