/**
 * Successful answers of image operations, written without holding the event loop: a body carrying
 * a 20 MB data URL goes out as JSON a slice at a time (the same bytes `res.json` would send), and
 * a raw image (`Accept: image/png`) is decoded from its data URL a slice at a time.
 */
import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Response } from "express";
import { rawImageOf } from "../jobs/raw-image.js";

/** Strings at least this long are written in slices of this many characters. */
const SLICE_CHARACTERS = 256 * 1024;

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

/**
 * `res.status(status).json(body)`, byte for byte, with long strings escaped and written a slice at
 * a time. Bodies without long strings go through `res.json` unchanged.
 */
export async function sendJson(res: Response, status: number, body: unknown): Promise<void> {
  const long: string[] = [];
  const marker = `atelier-long-string:${randomUUID()}:`;
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (typeof value !== "string" || value.length < SLICE_CHARACTERS) return value;
    long.push(value);
    return `${marker}${long.length - 1}`;
  });
  if (long.length === 0) {
    res.status(status).json(body);
    return;
  }
  // The text alternates: JSON, index of a long string, JSON, ...
  const parts = text.split(new RegExp(`"${marker}(\\d+)"`));
  const pieces: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 0) {
      pieces.push(parts[i]!);
      continue;
    }
    const value = long[Number(parts[i])]!;
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
  res.setHeader("Content-Length", pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0));
  for (const piece of pieces) {
    if (res.destroyed) return;
    await write(res, piece);
  }
  res.end();
}

/** The first image of an image operation's body as the raw answer (`Accept: image/*`). */
export async function sendImage(res: Response, body: unknown): Promise<void> {
  const raw = await rawImageOf(body);
  for (const [name, value] of Object.entries(raw.headers)) res.setHeader(name, value);
  res.status(200).type(raw.mediaType).send(raw.bytes);
}

/** Marks a synchronous image call whose success goes out as the raw image instead of JSON. */
export function answerRawImages(res: Response): void {
  res.locals.answerRawImage = true;
}

/** A procedure's successful result: raw when {@link answerRawImages} asked for it, else JSON. */
export function sendResult(res: Response, body: unknown): Promise<void> {
  return res.locals.answerRawImage === true ? sendImage(res, body) : sendJson(res, 200, body);
}
