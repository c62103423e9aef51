/**
 * Images of a job kept as bytes beside its record instead of inside its JSON (a 12 MP
 * job's request and result are 20-32 MB data URLs, and storing, reading or purging them as JSON
 * held the router's event loop for 200-990 ms). The record's input and result hold a stand-in
 * string in each image's place, and the record lists what each stand-in stands for
 * ({@link StoredImage}); the store keeps the bytes (job-image-blobs.ts). Answers are written from
 * the bytes a slice at a time (facade/result-responses.ts), so the data URL string is never made.
 *
 * - A request's long data URL (an `imageUrl`) is kept as the text the client sent, byte for byte
 *   ("text"): the job runs on exactly that text, whatever it holds.
 * - A result's image is kept as the worker's bytes ("image"): its data URL is
 *   `data:<mimeType>;base64,` and their base64, as the procedure would have written it.
 */
import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { ImageBytes } from "../core/image-bytes.js";

/** Which of a job's sets of bytes a blob belongs to; each set is deleted as a whole. */
export type BlobPart = "input" | "result" | "webhook";

/**
 * Where an image's bytes lie within its job: its set, and its name there (random, so bytes written
 * by a second finish of a job that lost the race never replace the first's).
 */
export interface BlobRef {
  part: BlobPart;
  name: string;
}

export function newBlob(part: BlobPart): BlobRef {
  return { part, name: randomUUID() };
}

export type StoredImage =
  /** A string of the request as its client sent it (ASCII), from `head` (through its first comma) on. */
  | { kind: "text"; blob: BlobRef; length: number; head: string }
  /** An image whose data URL is `data:<mimeType>;base64,` followed by the base64 of `bytes` bytes. */
  | { kind: "image"; blob: BlobRef; mimeType: string; bytes: number };

/** A job's stored images by the stand-in that takes their place in its input, result or webhook payload. */
export type StoredImages = ReadonlyMap<string, StoredImage>;

/** An image to store: what the record will say of it, and its bytes. */
export interface ImageToStore {
  image: StoredImage;
  bytes: Uint8Array;
}

export type ImagesToStore = ReadonlyMap<string, ImageToStore>;

export const NO_IMAGES: StoredImages = new Map();

const STAND_IN_PREFIX = "atelier-job-image:";

/** A new stand-in: random, so no other text of a request or result can be taken for one. */
export function newStandIn(): string {
  return `${STAND_IN_PREFIX}${randomUUID()}`;
}

/** The images as stored beside a record (JSON); null for none. */
export function imagesJson(images: StoredImages): string | null {
  return images.size === 0 ? null : JSON.stringify(Object.fromEntries(images));
}

/** What {@link imagesJson} wrote; no images for null (a record stored before images were kept apart). */
export function parseImages(json: string | null | undefined): StoredImages {
  return json ? new Map(Object.entries(JSON.parse(json) as Record<string, StoredImage>)) : NO_IMAGES;
}

export function storedOnly(images: ImagesToStore): StoredImages {
  return new Map([...images].map(([standIn, { image }]) => [standIn, image]));
}

/** Characters of the string an image stands for. */
export function textLength(image: StoredImage): number {
  return image.kind === "text" ? image.length : dataUrlPrefix(image.mimeType).length + Math.ceil(image.bytes / 3) * 4;
}

export const dataUrlPrefix = (mimeType: string) => `data:${mimeType};base64,`;

/** The start of the string an image stands for, through the first comma (`data:image/png;base64,`). */
export function headOf(image: StoredImage): string {
  return image.kind === "text" ? image.head : dataUrlPrefix(image.mimeType);
}

/** `value` (plain JSON) with each string `replace` answers for replaced; other values shared, not copied. */
export function replaceStrings(value: unknown, replace: (text: string) => string | undefined): unknown {
  if (typeof value === "string") return replace(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => replaceStrings(item, replace));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, replaceStrings(item, replace)]));
  }
  return value;
}

/** Longest head (through the first comma) of a request string kept apart; data URLs' heads are a few dozen characters. */
const MAX_HEAD = 1024;
const DATA = Buffer.from("data:");

/**
 * A request body with its long data URLs taken out: each string whose bytes `bytesOf` has (the
 * facade's long ASCII body strings, RequestContext.bodyStringBytes) and that starts as a data URL
 * is replaced by a stand-in and kept as those bytes. The strings' characters are never read.
 */
export function keepRequestImages(input: unknown, bytesOf: (text: string) => Uint8Array | undefined): { input: unknown; images: ImagesToStore } {
  const images = new Map<string, ImageToStore>();
  const kept = replaceStrings(input, (text) => {
    const bytes = bytesOf(text);
    if (!bytes) return undefined;
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    const comma = view.subarray(0, MAX_HEAD).indexOf(0x2c);
    if (comma < 0 || !view.subarray(0, DATA.length).equals(DATA)) return undefined;
    const standIn = newStandIn();
    images.set(standIn, { image: { kind: "text", blob: newBlob("input"), length: view.length, head: view.toString("latin1", 0, comma + 1) }, bytes: view });
    return standIn;
  });
  return { input: kept, images };
}

/**
 * A result with the images the procedure handed over as bytes (`kept`, by the stand-in it put in
 * their `url`): those the result holds become its stored images, in `part`.
 */
export function keepResultImages(result: unknown, kept: ReadonlyMap<string, ImageBytes>, part: BlobPart = "result"): ImagesToStore {
  const images = new Map<string, ImageToStore>();
  replaceStrings(result, (text) => {
    const image = kept.get(text);
    if (image && !images.has(text)) {
      images.set(text, { image: { kind: "image", blob: newBlob(part), mimeType: image.mimeType, bytes: image.bytes.length }, bytes: image.bytes });
    }
    return undefined;
  });
  return images;
}

/** Strings at least this long in a record stored before images were kept apart are taken out when it is converted. */
const LEGACY_IMAGE_CHARS = 64 * 1024;
const LEGACY_DATA_URL = /^data:([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+);base64,/i;

/**
 * A value of a record stored before images were kept apart (its data URLs inline), converted:
 * each long data URL becomes a stand-in and its bytes an image of `part`: a request's as its text
 * (as {@link keepRequestImages} keeps them), another's as "image" when it is the canonical base64
 * of its bytes (as results' are), else as its text. Synchronous: it runs once, when an old store is
 * opened (sqlite-job-store.ts).
 */
export function keepLegacyImages(value: unknown, part: BlobPart): { value: unknown; images: ImagesToStore } {
  const images = new Map<string, ImageToStore>();
  const converted = replaceStrings(value, (text) => {
    if (text.length < LEGACY_IMAGE_CHARS || !text.startsWith("data:")) return undefined;
    const comma = text.indexOf(",");
    // Printable ASCII only: a string kept as text is written back byte for byte.
    if (comma < 0 || comma >= MAX_HEAD || /[^\x20-\x7e]/.test(text)) return undefined;
    const blob = newBlob(part);
    const standIn = newStandIn();
    const media = part === "input" ? null : LEGACY_DATA_URL.exec(text);
    const bytes = media ? Buffer.from(text.slice(comma + 1), "base64") : undefined;
    if (media && bytes && bytes.toString("base64") === text.slice(comma + 1) && text.slice(0, comma + 1) === dataUrlPrefix(media[1]!)) {
      images.set(standIn, { image: { kind: "image", blob, mimeType: media[1]!, bytes: bytes.length }, bytes });
    } else {
      images.set(standIn, { image: { kind: "text", blob, length: text.length, head: text.slice(0, comma + 1) }, bytes: Buffer.from(text, "latin1") });
    }
    return standIn;
  });
  return { value: converted, images };
}

/** Characters of a request string made per turn of the event loop when a job runs. */
const TEXT_PIECE_BYTES = 1024 * 1024;

/**
 * ASCII bytes as a string, a piece per turn of the event loop, joined without copying (as the
 * facade makes a body's long strings: facade/json-body-scanner.ts).
 */
export async function asciiText(bytes: Buffer): Promise<string> {
  let text = "";
  for (let at = 0; at < bytes.length; at += TEXT_PIECE_BYTES) {
    if (at > 0) await nextTurn();
    text += bytes.toString("latin1", at, Math.min(at + TEXT_PIECE_BYTES, bytes.length));
  }
  return text;
}

/** A stored blob's bytes, read in order a chunk at a time when asked for, never held whole. */
export interface BlobReader {
  /** Bytes in the blob. */
  readonly length: number;
  /**
   * The bytes in order, `chunkBytes` at a time (the last shorter); each call reads them afresh.
   * Throws when the blob is deleted or replaced while being read.
   */
  chunks(chunkBytes: number): AsyncGenerator<Buffer>;
}
