/**
 * The JSON text of a body that carries 20 MB images, made a slice at a time: the same bytes
 * `JSON.stringify(body)` would give, as pieces, with long strings escaped a slice per turn of the
 * event loop and each image given as bytes (by the stand-in in its place) encoded to its data URL's
 * base64 a slice per turn as the pieces are read. Synchronous answers (facade/result-responses.ts),
 * a job's answers and events, and webhook payloads (signed, then sent) are written this way.
 *
 * A stored result's images are given as readers of their blobs instead ({@link StreamedImage}): read
 * a small chunk at a time as the sink takes the text, so a client that stops reading holds a chunk
 * of the image in the router, not the image.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { base64Slices } from "../core/base64-slices.js";
import { ORDINARY_STRING_CHARS } from "../core/ordinary-string.js";
import { randomUUID } from "node:crypto";
import type { BlobReader } from "./job-image-blobs.js";
import type { ImageBytes } from "../core/image-bytes.js";

/** Strings at least this long are escaped in slices of this many characters (ordinary-string.ts). */
const SLICE_CHARACTERS = ORDINARY_STRING_CHARS;
/**
 * Bytes of a stored image read per chunk (a multiple of 3: the chunks' base64 joins up): what each open answer holds of
 * it while its client is not reading.
 */
export const STREAM_CHUNK_BYTES = 48 * 1024;

/** A stored image, read from its blob a chunk at a time as it is written out. */
export interface StreamedImage {
  reader: BlobReader;
  mimeType: string;
}

/** An image given as bytes in memory or as a reader of its stored blob. */
export type ImageSource = ImageBytes | StreamedImage;

/** Images a body's stand-ins stand for: each is written as `data:<mimeType>;base64,` and the base64 of its bytes. */
export type ImagesByStandIn = ReadonlyMap<string, ImageSource>;

/** A stretch of the JSON text: text as it is, or an image's base64, encoded as it is read. */
export type JsonPiece = string | ImageSource;

/** Bytes of the image. */
export function imageLength(image: ImageSource): number {
  return "reader" in image ? image.reader.length : image.bytes.length;
}

/**
 * The pieces of `JSON.stringify(body)` with each stand-in of `images` written as its image's data
 * URL; null when the body has neither a long string nor an image (`JSON.stringify` is then cheap).
 */
export async function jsonPieces(body: unknown, images: ImagesByStandIn = new Map()): Promise<JsonPiece[] | null> {
  const long: (string | ImageSource)[] = [];
  const marker = `atelier-long-string:${randomUUID()}:`;
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (typeof value !== "string") return value;
    const image = images.get(value);
    if (image === undefined && value.length < SLICE_CHARACTERS) return value;
    long.push(image ?? value);
    return `${marker}${long.length - 1}`;
  });
  if (long.length === 0) return null;
  // The text alternates: JSON, index of a long string, JSON, ...
  const parts = text.split(new RegExp(`"${marker}(\\d+)"`));
  const pieces: JsonPiece[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 0) {
      pieces.push(parts[i]!);
      continue;
    }
    const value = long[Number(parts[i])]!;
    if (typeof value !== "string") {
      // Base64 and a media type from OUTPUT_MIME_TYPES: nothing in a data URL needs escaping.
      pieces.push(`"data:${value.mimeType};base64,`, value, '"');
      continue;
    }
    for (let start = 0; start < value.length; ) {
      let end = Math.min(start + SLICE_CHARACTERS, value.length);
      // A slice never splits a surrogate pair (JSON.stringify would escape each half).
      const last = value.charCodeAt(end - 1);
      if (end < value.length && last >= 0xd800 && last <= 0xdbff) end--;
      const escaped = JSON.stringify(value.slice(start, end));
      pieces.push(`${start === 0 ? '"' : ""}${escaped.slice(1, -1)}${end === value.length ? '"' : ""}`);
      start = end;
      await nextTurn();
    }
  }
  return pieces;
}

/** The UTF-8 length of the text the pieces make. */
export function piecesByteLength(pieces: readonly JsonPiece[]): number {
  return pieces.reduce((sum, piece) => sum + (typeof piece === "string" ? Buffer.byteLength(piece) : Math.ceil(imageLength(piece) / 3) * 4), 0);
}

/** The text the pieces make, in order, an image's base64 a slice per turn of the event loop. */
export async function* piecesText(pieces: readonly JsonPiece[]): AsyncGenerator<string> {
  for (const piece of pieces) {
    if (typeof piece === "string") {
      yield piece;
      continue;
    }
    if ("reader" in piece) {
      for await (const chunk of piece.reader.chunks(STREAM_CHUNK_BYTES)) yield chunk.toString("base64");
      continue;
    }
    yield* base64Slices(piece.bytes);
  }
}

/** Something written in order that says when to wait (an HTTP response or request). */
export interface PieceSink {
  write(chunk: string | Uint8Array): boolean;
  readonly destroyed: boolean;
  once(event: "drain" | "close", listener: () => void): unknown;
  off(event: "drain" | "close", listener: () => void): unknown;
}

/** Writes `chunk`, waiting for the sink to drain (or close) when its buffer is full. */
export async function writeChunk(sink: PieceSink, chunk: string | Uint8Array): Promise<void> {
  if (sink.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      sink.off("drain", done);
      sink.off("close", done);
      resolve();
    };
    sink.once("drain", done);
    sink.once("close", done);
  });
}

/** Writes the pieces' text to `sink`; false when the sink was destroyed on the way (the client left). */
export async function writePieces(sink: PieceSink, pieces: readonly JsonPiece[]): Promise<boolean> {
  for await (const text of piecesText(pieces)) {
    if (sink.destroyed) return false;
    await writeChunk(sink, text);
  }
  return true;
}
