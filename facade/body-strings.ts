/**
 * The long ASCII strings of a request body (data URLs), kept with their bytes for the request's
 * life: the JSON reader (json-body.ts) keeps the long strings it cut out of the text, the multipart
 * reader (multipart-body.ts) the data URL it made of each image file. The router reads such a
 * string's bytes instead of its characters (RequestContext.bodyStringBytes): the strings are made
 * from pieces without copying them into one, and the first read of their characters would do that
 * copy on the event loop.
 */
import type { Response } from "express";

/** A long ASCII string of a request body, and its bytes (one byte per character). */
export interface BodyString {
  text: string;
  bytes: Buffer;
}

function keptOf(res: Response): BodyString[] {
  return ((res.locals as { bodyStrings?: BodyString[] }).bodyStrings ??= []);
}

/** Keeps `strings` for this request. */
export function keepBodyStrings(res: Response, strings: readonly BodyString[]): void {
  keptOf(res).push(...strings);
}

/**
 * The bytes of `text` when it is one of this request's long ASCII body strings itself (not merely an
 * equal string: strings are compared by identity first, and only those of the same length are
 * compared at all).
 */
export function bodyStringBytes(res: Response, text: string): Buffer | undefined {
  return keptOf(res).find((entry) => entry.text.length === text.length && entry.text === text)?.bytes;
}
