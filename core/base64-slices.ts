/**
 * Base64 of large images a slice at a time, yielding to the event loop between slices, so that a
 * 20 MB image does not hold the router's loop for the whole conversion (no block over
 * 20 ms). Small inputs take one slice and no yield.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { ORDINARY_STRING_CHARS } from "./ordinary-string.js";

/**
 * Characters of base64 per slice (a multiple of 4, so every slice decodes on its own): each slice
 * made as a string is an ordinary one (ordinary-string.ts).
 */
export const BASE64_SLICE_CHARS = ORDINARY_STRING_CHARS;
/** Bytes per slice when encoding (a multiple of 3, so slices concatenate to the one-piece encoding). */
const BYTES_PER_SLICE = (BASE64_SLICE_CHARS / 4) * 3;

/** True when `test` holds for some slice of `text` (slices of {@link BASE64_SLICE_CHARS}). */
export async function someSlice(text: string, test: (slice: string) => boolean): Promise<boolean> {
  for (let start = 0; start < text.length; start += BASE64_SLICE_CHARS) {
    if (start > 0) await nextTurn();
    if (test(text.slice(start, start + BASE64_SLICE_CHARS))) return true;
  }
  return false;
}

/** `text` with `edit` applied to each slice, joined (for edits that never span two slices). */
export async function mapSlices(text: string, edit: (slice: string) => string): Promise<string> {
  let result = "";
  for (let start = 0; start < text.length; start += BASE64_SLICE_CHARS) {
    if (start > 0) await nextTurn();
    result += edit(text.slice(start, start + BASE64_SLICE_CHARS));
  }
  return result;
}

/** Decodes base64 `text` (already validated) from `start` to its end into a new buffer. */
export async function decodeBase64(text: string, start = 0): Promise<Buffer> {
  const out = Buffer.allocUnsafe(Math.ceil(((text.length - start) * 3) / 4));
  let written = 0;
  for (let at = start; at < text.length; at += BASE64_SLICE_CHARS) {
    if (at > start) await nextTurn();
    written += out.write(text.slice(at, at + BASE64_SLICE_CHARS), written, "base64");
  }
  return out.subarray(0, written);
}

/** The base64 of `bytes` a slice at a time, a turn of the event loop between slices (read in place, never copied). */
export async function* base64Slices(bytes: Uint8Array): AsyncGenerator<string> {
  for (let at = 0; at < bytes.length; at += BYTES_PER_SLICE) {
    if (at > 0) await nextTurn();
    yield Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(BYTES_PER_SLICE, bytes.length - at)).toString("base64");
  }
}

/** The base64 of `bytes` (read in place, never copied). */
export async function encodeBase64(bytes: Uint8Array): Promise<string> {
  let text = "";
  for await (const slice of base64Slices(bytes)) text += slice;
  return text;
}
