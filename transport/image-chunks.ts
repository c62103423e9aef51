/**
 * An image's bytes in pieces, for the `*Chunked` RPCs (proto: atelier.image.v1.ImageChunk), shared by
 * the router's clients and the workers' server. A unary message holding a whole 20 MB image is
 * built, framed and joined by grpc-js in one copy each, every one a block of the event loop (issue
 * 19); in chunks each copy is small, and the receiver copies each chunk into place in one buffer,
 * allocated when the first chunk announces the length.
 */
import type { Writable } from "node:stream";
import { AtelierError } from "../core/errors.js";
import type { Image, ImageChunk } from "../gen/atelier/image/v1/image.js";

/**
 * Image bytes per chunk: small enough that writing, framing and reading one is well under a
 * millisecond, and under the 1 MiB that `npm start` sets as glibc's mmap threshold, so each
 * chunk's buffers come from memory malloc already holds rather than fresh pages.
 */
export const IMAGE_CHUNK_BYTES = 512 * 1024;

/** `bytes` as chunks of {@link IMAGE_CHUNK_BYTES}, views of `bytes`; the first announces the length (an empty image is one empty chunk). */
export function imageChunks(bytes: Uint8Array): ImageChunk[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const chunks: ImageChunk[] = [];
  for (let at = 0; at === 0 || at < buffer.length; at += IMAGE_CHUNK_BYTES) {
    chunks.push({ totalBytes: at === 0 ? buffer.length : 0, data: buffer.subarray(at, at + IMAGE_CHUNK_BYTES) });
  }
  return chunks;
}

const brokenStream = (message: string) => new AtelierError("INVALID_INPUT", `Invalid chunked stream: ${message}.`);

/**
 * Gathers one image's chunks into one buffer. The first chunk announces the length (refused over
 * `maxBytes`, before any byte is kept); bytes beyond it, a second announcement, or fewer bytes
 * than announced at the end are refused as a broken stream.
 */
export class ImageAssembly {
  private bytes: Buffer | undefined;
  private received = 0;

  constructor(private readonly maxBytes: number) {}

  /** Whether a first chunk has arrived. */
  get started(): boolean {
    return this.bytes !== undefined;
  }

  add(chunk: ImageChunk | undefined): void {
    if (chunk === undefined) return;
    if (this.bytes === undefined) {
      if (chunk.totalBytes > this.maxBytes) {
        throw new AtelierError("PAYLOAD_TOO_LARGE", `The image is ${chunk.totalBytes} bytes, over the limit of ${this.maxBytes} bytes per image message (ATELIER_GRPC_MAX_MESSAGE_BYTES).`);
      }
      this.bytes = Buffer.allocUnsafe(chunk.totalBytes);
    } else if (chunk.totalBytes !== 0) throw brokenStream("an image's length is announced twice");
    if (chunk.data.length > this.bytes.length - this.received) throw brokenStream(`more image bytes than the ${this.bytes.length} announced`);
    this.received += chunk.data.copy(this.bytes, this.received);
  }

  /** The whole image; undefined when no chunk came. */
  finish(): Buffer | undefined {
    if (this.bytes !== undefined && this.received !== this.bytes.length) throw brokenStream(`${this.received} of the ${this.bytes.length} image bytes announced`);
    return this.bytes;
  }
}

/**
 * Writes `messages` to a gRPC stream in order, waiting for it to drain whenever its buffer is full,
 * so each message is serialized and framed on its own turn; resolves false if the stream closes or
 * `stop` aborts first (a call that ended with a status may never drain nor close its writing side).
 */
export async function writeInTurn<Message>(stream: Writable, messages: Iterable<Message>, stop: AbortSignal): Promise<boolean> {
  for (const message of messages) {
    if (stop.aborted || stream.destroyed || stream.writableEnded) return false;
    if (stream.write(message)) continue;
    const drained = await new Promise<boolean>((resolve) => {
      const done = (value: boolean) => () => {
        stream.off("drain", onDrain);
        stream.off("close", onStop);
        stop.removeEventListener("abort", onStop);
        resolve(value);
      };
      const onDrain = done(true);
      const onStop = done(false);
      stream.on("drain", onDrain);
      stream.on("close", onStop);
      stop.addEventListener("abort", onStop, { once: true });
    });
    if (!drained) return false;
  }
  return !stop.aborted;
}

/** A message that may carry an image: the unary request or response. */
export type WithImage = { image?: Image | undefined };

export interface ChunkedRequest<Req> {
  request?: Req | undefined;
  imageChunk?: ImageChunk | undefined;
}

export interface ChunkedResponse<Res> {
  step: number;
  totalSteps: number;
  stage: string;
  response?: Res | undefined;
  imageChunk?: ImageChunk | undefined;
}

const NO_BYTES = Buffer.alloc(0);

/** `message` with its image's bytes taken out, then the messages that carry them (the first with `message`). */
export function chunkedMessages<Message extends WithImage, Out>(message: Message, wrap: (head: Message | undefined, chunk: ImageChunk | undefined) => Out): Out[] {
  const image = message.image;
  if (image === undefined) return [wrap(message, undefined)];
  return imageChunks(image.data).map((chunk, index) => wrap(index === 0 ? { ...message, image: { ...image, data: NO_BYTES } } : undefined, chunk));
}

/** `head` with its image's bytes (gathered from chunks) put back; the bytes must come one way only. */
export function withGatheredImage<Message extends WithImage>(head: Message, bytes: Buffer | undefined): Message {
  if (bytes === undefined) return head;
  if (head.image && head.image.data.length > 0) throw new AtelierError("INVALID_INPUT", "Invalid chunked stream: the image's bytes came both in the message and as chunks.");
  return { ...head, image: { data: bytes, mimeType: head.image?.mimeType ?? "", width: head.image?.width ?? 0, height: head.image?.height ?? 0 } };
}
