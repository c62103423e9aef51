/**
 * Successful answers of image operations, written without holding the event loop: a body carrying
 * a 20 MB data URL goes out as JSON a slice at a time (the same bytes `res.json` would send), and
 * a raw image (`Accept: image/png`) is decoded from its data URL a slice at a time.
 *
 * A synchronous call's images come as the worker's bytes instead (RequestContext.keepImage), with a
 * stand-in in their `url`: the data URLs are written from the bytes, base64 a slice at a time, and a
 * raw answer is the bytes, so the data URL string is never made (nor encoded twice).
 */
import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Response } from "express";
import { BASE64_SLICE_CHARS } from "../core/base64-slices.js";
import { rawImageOf, type ImageBytes as KeptImage } from "../jobs/raw-image.js";

/** Strings at least this long are written in slices of this many characters. */
const SLICE_CHARACTERS = 256 * 1024;
/** Bytes of a kept image encoded per slice (a multiple of 3: the slices' base64 joins up). */
const IMAGE_BYTES_PER_SLICE = (BASE64_SLICE_CHARS / 4) * 3;

/** The images an answer's `url`s stand for, by stand-in. */
export type KeptImages = ReadonlyMap<string, KeptImage>;

/**
 * Remembers an image of this request's answer (RequestContext.keepImage) and returns the stand-in
 * for its `url`: random, so no other text of the answer can be taken for it.
 */
export function keepImage(res: Response, image: KeptImage): string {
  const kept = (res.locals.keptImages ??= new Map()) as Map<string, KeptImage>;
  const standIn = `atelier-kept-image:${randomUUID()}`;
  kept.set(standIn, image);
  return standIn;
}

const keptImages = (res: Response): KeptImages => (res.locals.keptImages as KeptImages | undefined) ?? new Map();
const dataUrlPrefix = (image: KeptImage) => `data:${image.mimeType};base64,`;

/** Writes `piece`, waiting for the socket to drain (or close) when its buffer is full. */
async function write(res: Response, piece: string | Buffer): Promise<void> {
  if (res.write(piece)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** A stretch of the JSON text: written as is, or a kept image's data URL encoded as it is written. */
type Piece = string | KeptImage;

/**
 * `res.status(status).json(body)`, byte for byte, with long strings escaped and written a slice at
 * a time, and each stand-in of `images` (keepImage) written as its image's data URL. Bodies with
 * neither go through `res.json` unchanged.
 */
export async function sendJson(res: Response, status: number, body: unknown, images: KeptImages = new Map()): Promise<void> {
  const long: (string | KeptImage)[] = [];
  const marker = `atelier-long-string:${randomUUID()}:`;
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (typeof value !== "string") return value;
    const image = images.get(value);
    if (image === undefined && value.length < SLICE_CHARACTERS) return value;
    long.push(image ?? value);
    return `${marker}${long.length - 1}`;
  });
  if (long.length === 0) {
    res.status(status).json(body);
    return;
  }
  // The text alternates: JSON, index of a long string, JSON, ...
  const parts = text.split(new RegExp(`"${marker}(\\d+)"`));
  const pieces: Piece[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 0) {
      pieces.push(parts[i]!);
      continue;
    }
    const value = long[Number(parts[i])]!;
    if (typeof value !== "string") {
      // Base64 and a media type from OUTPUT_MIME_TYPES: nothing in a data URL needs escaping.
      pieces.push(`"${dataUrlPrefix(value)}`, value, '"');
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
  res.status(status);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", pieces.reduce((sum, piece) => sum + (typeof piece === "string" ? Buffer.byteLength(piece) : Math.ceil(piece.bytes.length / 3) * 4), 0));
  for (const piece of pieces) {
    if (typeof piece === "string") {
      if (res.destroyed) return;
      await write(res, piece);
      continue;
    }
    for (let at = 0; at < piece.bytes.length; at += IMAGE_BYTES_PER_SLICE) {
      if (res.destroyed) return;
      const slice = piece.bytes.subarray(at, at + IMAGE_BYTES_PER_SLICE);
      await write(res, Buffer.from(slice.buffer, slice.byteOffset, slice.length).toString("base64"));
      await nextTurn();
    }
  }
  res.end();
}

/** The first image of an image operation's body as the raw answer (`Accept: image/*`); `images` as for {@link sendJson}. */
export async function sendImage(res: Response, body: unknown, images: KeptImages = new Map()): Promise<void> {
  const raw = await rawImageOf(body, images);
  for (const [name, value] of Object.entries(raw.headers)) res.setHeader(name, value);
  res.status(200).type(raw.mediaType).send(raw.bytes);
}

/** Marks a synchronous image call whose success goes out as the raw image instead of JSON. */
export function answerRawImages(res: Response): void {
  res.locals.answerRawImage = true;
}

/** A procedure's successful result: raw when {@link answerRawImages} asked for it, else JSON. */
export function sendResult(res: Response, body: unknown): Promise<void> {
  return res.locals.answerRawImage === true ? sendImage(res, body, keptImages(res)) : sendJson(res, 200, body, keptImages(res));
}
