/**
 * gRPC serializers for the messages that carry an image, shared by the router's clients and the
 * workers' server, that copy the image's bytes once instead of four or five times (each
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
 * field, bytes that do not parse) goes to the generated code, which behaves as it always did. The
 * chunked RPCs' pieces of an image (`ImageChunk`) are written and read the same way.
 */
import type { ServiceDefinition } from "@grpc/grpc-js";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Image, ImageChunk } from "../gen/atelier/image/v1/image.js";

/** Images smaller than this go through the generated code: its copies cost nothing that matters. */
export const LARGE_IMAGE_BYTES = 64 * 1024;

/** What the codec uses of a generated message's code. */
interface MessageCode {
  encode(message: { data: Buffer }): BinaryWriter;
  decode(bytes: Uint8Array): object;
}

/** Where a message keeps its image's bytes: `message[key].data`, field `field` then field `dataField` on the wire. */
export interface ImageBytesField {
  key: "image" | "imageChunk";
  field: number;
  dataField: number;
  /** The generated code of the message in `key` (for its fields other than `data`). */
  fields: MessageCode;
}

/** `Image image = 1` (whose `bytes data = 1`): the unary messages. */
const IMAGE: ImageBytesField = { key: "image", field: 1, dataField: 1, fields: Image as MessageCode };
/** `ImageChunk image_chunk = N` (whose `bytes data = 2`): the chunked messages. */
const chunkIn = (field: number): ImageBytesField => ({ key: "imageChunk", field, dataField: 2, fields: ImageChunk as MessageCode });

/** The methods whose request or answer carries image bytes, and where (their protos say so). */
export const IMAGE_MESSAGES: Record<string, { request?: ImageBytesField; response?: ImageBytesField }> = {
  "/atelier.upscale.v1.UpscaleService/Upscale": { request: IMAGE, response: IMAGE },
  "/atelier.style.v1.StyleTransferService/StyleTransfer": { request: IMAGE, response: IMAGE },
  "/atelier.background.v1.BackgroundService/RemoveBackground": { request: IMAGE, response: IMAGE },
  "/atelier.generation.v1.GenerationService/Generate": { response: IMAGE },
  "/atelier.upscale.v1.UpscaleService/UpscaleChunked": { request: chunkIn(2), response: chunkIn(5) },
  "/atelier.style.v1.StyleTransferService/StyleTransferChunked": { request: chunkIn(2), response: chunkIn(5) },
  "/atelier.background.v1.BackgroundService/RemoveBackgroundChunked": { request: chunkIn(2), response: chunkIn(5) },
};

type Serialize = (value: never) => Buffer;
type Deserialize = (bytes: Buffer) => unknown;

const header = (fieldNo: number, length: number) => new BinaryWriter().tag(fieldNo, WireType.LengthDelimited).uint32(length).finish();

/** `serialize` (the generated one) for small images; one copy of the bytes for large ones. */
export function serializeWithImage(serialize: Serialize, where: ImageBytesField = IMAGE): (value: object) => Buffer {
  const generated = serialize as (value: object) => Buffer;
  return (value) => {
    const inner = (value as Record<string, unknown>)[where.key] as { data: Buffer } | undefined;
    if (inner === undefined || inner.data.length < LARGE_IMAGE_BYTES) return generated(value);
    const others = generated({ ...value, [where.key]: undefined });
    const innerFields = where.fields.encode({ ...inner, data: Buffer.alloc(0) }).finish();
    const dataHeader = header(where.dataField, inner.data.length);
    const innerHeader = header(where.field, innerFields.length + dataHeader.length + inner.data.length);
    return Buffer.concat([others, innerHeader, innerFields, dataHeader, inner.data]);
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
export function deserializeWithImage(deserialize: Deserialize, where: ImageBytesField = IMAGE): (bytes: Buffer) => unknown {
  return (bytes) => {
    let inner: Span | undefined;
    let data: Span | undefined;
    try {
      inner = onlyField(bytes, 0, bytes.length, where.field);
      data = inner && onlyField(bytes, inner.contentStart, inner.end, where.dataField);
    } catch {
      // Bytes that do not parse: the generated decoder says so in its own words.
    }
    if (!inner || !data || data.end - data.contentStart < LARGE_IMAGE_BYTES) return deserialize(bytes);
    const message = deserialize(without(bytes, 0, bytes.length, inner)) as Record<string, unknown>;
    const fields = where.fields.decode(without(bytes, inner.contentStart, inner.end, data));
    return Object.assign(message, { [where.key]: { ...fields, data: bytes.subarray(data.contentStart, data.end) } });
  };
}

/** `definition` with the image-carrying methods' (de)serializers replaced by the ones above. */
export function withImageCodecs<Definition extends ServiceDefinition>(definition: Definition): Definition {
  const methods = Object.entries(definition).map(([name, method]) => {
    const carries = IMAGE_MESSAGES[method.path];
    if (!carries) return [name, method];
    const { request, response } = carries;
    return [
      name,
      {
        ...method,
        ...(request && { requestSerialize: serializeWithImage(method.requestSerialize, request), requestDeserialize: deserializeWithImage(method.requestDeserialize, request) }),
        ...(response && { responseSerialize: serializeWithImage(method.responseSerialize, response), responseDeserialize: deserializeWithImage(method.responseDeserialize, response) }),
      },
    ];
  });
  return Object.fromEntries(methods) as Definition;
}
