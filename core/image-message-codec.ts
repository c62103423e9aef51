/**
 * gRPC serializers for the messages that carry an image, shared by the router's clients and the
 * workers' server, that copy the image's bytes once instead of four or five times (issue 19: each
 * copy of a 20 MB image holds the event loop, and the in-process default runs router and workers on
 * the same loop).
 *
 * The generated code writes the bytes into a growing buffer (copied again as it grows), slices the
 * result (a copy) and wraps it in a Buffer (a copy); reading copies the bytes out of the received
 * message. Here a message with a large image is written as its other fields, then the image field,
 * whose header is written by hand around the bytes, in one buffer (one copy); a received one is
 * decoded with the image's bytes cut out of what the generated decoder sees, and they are then
 * given back as a view of the received buffer (no copy). Field order is free in protobuf, so any
 * peer reads these messages as it reads the generated ones. Anything unusual (a repeated image
 * field, bytes that do not parse) goes to the generated code, which behaves as it always did.
 */
import type { ServiceDefinition } from "@grpc/grpc-js";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Image } from "../gen/atelier/image/v1/image.js";

/** Images smaller than this go through the generated code: its copies cost nothing that matters. */
export const LARGE_IMAGE_BYTES = 64 * 1024;
/** Every message listed below carries its image in field 1, and `Image.data` is field 1. */
const IMAGE_FIELD = 1;
const DATA_FIELD = 1;

/** The unary methods whose request or answer carries `Image image = 1` (their protos say so). */
export const IMAGE_MESSAGES: Record<string, { request: boolean; response: boolean }> = {
  "/atelier.upscale.v1.UpscaleService/Upscale": { request: true, response: true },
  "/atelier.style.v1.StyleTransferService/StyleTransfer": { request: true, response: true },
  "/atelier.background.v1.BackgroundService/RemoveBackground": { request: true, response: true },
  "/atelier.generation.v1.GenerationService/Generate": { request: false, response: true },
};

type WithImage = { image?: Image | undefined };
type Serialize = (value: never) => Buffer;
type Deserialize = (bytes: Buffer) => unknown;

const header = (fieldNo: number, length: number) => new BinaryWriter().tag(fieldNo, WireType.LengthDelimited).uint32(length).finish();

/** `serialize` (the generated one) for small images; one copy of the bytes for large ones. */
export function serializeWithImage(serialize: Serialize): (value: WithImage) => Buffer {
  const generated = serialize as (value: WithImage) => Buffer;
  return (value) => {
    const image = value.image;
    if (image === undefined || image.data.length < LARGE_IMAGE_BYTES) return generated(value);
    const others = generated({ ...value, image: undefined });
    const imageFields = Image.encode({ ...image, data: Buffer.alloc(0) }).finish();
    const dataHeader = header(DATA_FIELD, image.data.length);
    const imageHeader = header(IMAGE_FIELD, imageFields.length + dataHeader.length + image.data.length);
    return Buffer.concat([others, imageHeader, imageFields, dataHeader, image.data]);
  };
}

interface Span {
  /** First byte of the field's tag. */
  start: number;
  /** First byte of its content. */
  contentStart: number;
  /** First byte after it. */
  end: number;
}

/** The one length-delimited field `fieldNo` in `bytes[from, to)`; undefined when absent, repeated or of another type. */
function onlyField(bytes: Uint8Array, from: number, to: number, fieldNo: number): Span | undefined {
  const reader = new BinaryReader(bytes.subarray(0, to));
  reader.pos = from;
  let found: Span | undefined;
  while (reader.pos < to) {
    const start = reader.pos;
    const [number, wireType] = reader.tag();
    if (number !== fieldNo) {
      reader.skip(wireType, number);
      continue;
    }
    if (found || wireType !== WireType.LengthDelimited) return undefined;
    const length = reader.uint32();
    const contentStart = reader.pos;
    if (contentStart + length > to) return undefined;
    reader.pos += length;
    found = { start, contentStart, end: reader.pos };
  }
  return found;
}

const without = (bytes: Buffer, from: number, to: number, cut: Span) => Buffer.concat([bytes.subarray(from, cut.start), bytes.subarray(cut.end, to)]);

/** `deserialize` (the generated one), with a large image's bytes left where they were received. */
export function deserializeWithImage(deserialize: Deserialize): (bytes: Buffer) => unknown {
  return (bytes) => {
    let image: Span | undefined;
    let data: Span | undefined;
    try {
      image = onlyField(bytes, 0, bytes.length, IMAGE_FIELD);
      data = image && onlyField(bytes, image.contentStart, image.end, DATA_FIELD);
    } catch {
      // Bytes that do not parse: the generated decoder says so in its own words.
    }
    if (!image || !data || data.end - data.contentStart < LARGE_IMAGE_BYTES) return deserialize(bytes);
    const message = deserialize(without(bytes, 0, bytes.length, image)) as WithImage;
    const fields = Image.decode(without(bytes, image.contentStart, image.end, data));
    return Object.assign(message, { image: { ...fields, data: bytes.subarray(data.contentStart, data.end) } });
  };
}

/** `definition` with the image-carrying methods' (de)serializers replaced by the ones above. */
export function withImageCodecs<Definition extends ServiceDefinition>(definition: Definition): Definition {
  const methods = Object.entries(definition).map(([name, method]) => {
    const carries = IMAGE_MESSAGES[method.path];
    if (!carries) return [name, method];
    return [
      name,
      {
        ...method,
        ...(carries.request && { requestSerialize: serializeWithImage(method.requestSerialize), requestDeserialize: deserializeWithImage(method.requestDeserialize) }),
        ...(carries.response && { responseSerialize: serializeWithImage(method.responseSerialize), responseDeserialize: deserializeWithImage(method.responseDeserialize) }),
      },
    ];
  });
  return Object.fromEntries(methods) as Definition;
}
