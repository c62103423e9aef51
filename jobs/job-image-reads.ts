/**
 * A job's stored images read back (job-images.ts): the request a job runs on, and the result
 * images an answer, an event or a webhook writes out from their bytes.
 */
import { AtelierError } from "../core/errors.js";
import { asciiText, replaceStrings, type StoredImages } from "./job-images.js";
import type { JobRecord } from "./job-record.js";
import type { StreamedImage } from "./json-pieces.js";
import type { ImageBytes } from "./raw-image.js";
import type { JobStore } from "./job-store.js";

/** The request a job runs on: its body with the strings back in place, and each long string's bytes. */
export interface JobRequest {
  input: unknown;
  /** The bytes of `text` when it is one of the request's stored strings itself (RequestContext.bodyStringBytes). */
  bytesOf(text: string): Buffer | undefined;
}

export async function jobRequest(store: JobStore, job: JobRecord): Promise<JobRequest> {
  const strings = new Map<string, { text: string; bytes: Buffer }>();
  for (const [standIn, image] of job.images) {
    if (image.kind !== "text" || image.blob.part !== "input") continue;
    const bytes = await store.readImage(job.id, image.blob);
    if (!bytes) throw new AtelierError("INTERNAL", `The request of job ${job.id} lost its image; submit it again.`);
    strings.set(standIn, { text: await asciiText(bytes), bytes });
  }
  const input = strings.size === 0 ? job.input : replaceStrings(job.input, (text) => strings.get(text)?.text);
  const kept = [...strings.values()];
  return {
    input,
    // By identity, after the length: comparing two 20 MB strings' characters would read them whole.
    bytesOf: (text) => kept.find((entry) => entry.text.length === text.length && entry.text === text)?.bytes,
  };
}

/**
 * The bytes of the images `images` lists (a result's, or a webhook payload's), by stand-in, ready
 * for facade/result-responses.ts; null when one of them is gone (the result was purged meanwhile).
 */
export async function imageBytesOf(store: JobStore, jobId: string, images: StoredImages): Promise<Map<string, ImageBytes> | null> {
  const found = new Map<string, ImageBytes>();
  for (const [standIn, image] of images) {
    if (image.kind !== "image" || image.blob.part === "input") continue;
    const bytes = await store.readImage(jobId, image.blob);
    if (!bytes) return null;
    found.set(standIn, { bytes, mimeType: image.mimeType });
  }
  return found;
}

/**
 * Readers of the images `images` lists, by stand-in, for answers that write them out a chunk at a
 * time (facade/result-responses.ts) without holding them; null when one of them is gone.
 */
export async function imageStreamsOf(store: JobStore, jobId: string, images: StoredImages): Promise<Map<string, StreamedImage> | null> {
  const found = new Map<string, StreamedImage>();
  for (const [standIn, image] of images) {
    if (image.kind !== "image" || image.blob.part === "input") continue;
    const reader = await store.imageReader(jobId, image.blob);
    if (!reader) return null;
    found.set(standIn, { reader, mimeType: image.mimeType });
  }
  return found;
}
