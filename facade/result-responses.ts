/**
 * Successful answers of image operations, written without holding the event loop: a body carrying
 * a 20 MB data URL goes out as JSON a slice at a time (the same bytes `res.json` would send), and
 * a raw image (`Accept: image/png`) is decoded from its data URL a slice at a time.
 *
 * A synchronous call's images come as the worker's bytes instead (RequestContext.keepImage), with a
 * stand-in in their `url`: the data URLs are written from the bytes, base64 a slice at a time, and a
 * raw answer is the bytes, so the data URL string is never made (nor encoded twice). A job's stored
 * result comes as readers of its images' blobs, read a chunk at a time only as fast as the client
 * takes the answer: an answer whose client stops reading holds a chunk, not the image.
 */
import { randomUUID } from "node:crypto";
import type { Response } from "express";
import { jsonPieces, piecesByteLength, STREAM_CHUNK_BYTES, writeChunk, writePieces, type ImagesByStandIn } from "../jobs/json-pieces.js";
import { rawImageOf, type ImageBytes as KeptImage } from "../jobs/raw-image.js";

/** The images an answer's `url`s stand for, by stand-in. */
export type KeptImages = ImagesByStandIn;

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

/**
 * `res.status(status).json(body)`, byte for byte, with long strings escaped and written a slice at
 * a time, and each stand-in of `images` (keepImage) written as its image's data URL
 * (jobs/json-pieces.ts). Bodies with neither go through `res.json` unchanged.
 */
export async function sendJson(res: Response, status: number, body: unknown, images: KeptImages = new Map()): Promise<void> {
  const pieces = await jsonPieces(body, images);
  if (pieces === null) {
    res.status(status).json(body);
    return;
  }
  res.status(status);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", piecesByteLength(pieces));
  await cutShortOnFailure(res, async () => {
    if (await writePieces(res, pieces)) res.end();
  });
}

/** The first image of an image operation's body as the raw answer (`Accept: image/*`); `images` as for {@link sendJson}. */
export async function sendImage(res: Response, body: unknown, images: KeptImages = new Map()): Promise<void> {
  const { image, headers } = await rawImageOf(body, images);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(200).type(image.mimeType);
  if (!("reader" in image)) {
    res.send(Buffer.from(image.bytes.buffer, image.bytes.byteOffset, image.bytes.length));
    return;
  }
  res.setHeader("Content-Length", image.reader.length);
  await cutShortOnFailure(res, async () => {
    for await (const chunk of image.reader.chunks(STREAM_CHUNK_BYTES)) {
      if (res.destroyed) return;
      await writeChunk(res, chunk);
    }
    res.end();
  });
}

/**
 * Runs `write`; when it fails after the status and `Content-Length` went out (a stored image deleted
 * while read), closes the connection, so the client sees a cut-short answer rather than waiting for
 * bytes that will not come.
 */
async function cutShortOnFailure(res: Response, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (res.headersSent) res.destroy();
    throw error;
  }
}

/** Marks a synchronous image call whose success goes out as the raw image instead of JSON. */
export function answerRawImages(res: Response): void {
  res.locals.answerRawImage = true;
}

/** A procedure's successful result: raw when {@link answerRawImages} asked for it, else JSON. */
export function sendResult(res: Response, body: unknown): Promise<void> {
  return res.locals.answerRawImage === true ? sendImage(res, body, keptImages(res)) : sendJson(res, 200, body, keptImages(res));
}
