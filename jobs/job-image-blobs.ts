/**
 * Where the embedded job store keeps its jobs' image bytes (job-images.ts): one file per image,
 * `<dataDir>/job-images/<jobId>/<part>-<name>`, written and read by the thread pool, so the
 * router's event loop never copies a 20 MB image in one go. The shared store keeps them in Redis
 * instead (redis-image-blobs.ts), behind the same interface.
 *
 * Answers read them as {@link BlobReader}s, a chunk at a time as the client takes them: a result
 * held whole by every open download would let a few hundred slow readers fill the router's memory.
 */
import fs from "node:fs";
import path from "node:path";
import { newBlob, type BlobPart, type BlobReader, type BlobRef, type ImagesToStore, type StoredImage, type StoredImages } from "./job-images.js";
import type { InsertOutcome, NewJob } from "./job-store.js";

export type { BlobReader };

export interface JobImageBlobs {
  /** Stores each image's bytes at its blob (replacing what was there). */
  write(jobId: string, images: ImagesToStore): Promise<void>;
  /** The blob's bytes; null when it is gone (purged, or never written). */
  read(jobId: string, blob: BlobRef): Promise<Buffer | null>;
  /** A reader of the blob's bytes; null when it is gone. */
  reader(jobId: string, blob: BlobRef): Promise<BlobReader | null>;
  /** Makes `to` hold the bytes of `from` (a webhook payload's own copy of a result image). */
  copy(jobId: string, from: BlobRef, to: BlobRef): Promise<void>;
  /** Deletes these blobs. */
  remove(jobId: string, blobs: readonly BlobRef[]): Promise<void>;
  /** Deletes every blob of the job's `part`. */
  drop(jobId: string, part: BlobPart): Promise<void>;
}

/** A webhook delivery's own copies (part `webhook`) of the result images its payload holds, by the payload's stand-ins. */
export async function copyForDelivery(blobs: JobImageBlobs, jobId: string, images: StoredImages): Promise<Map<string, StoredImage>> {
  const copies = new Map<string, StoredImage>();
  for (const [standIn, image] of images) {
    const blob = newBlob("webhook");
    await blobs.copy(jobId, image.blob, blob);
    copies.set(standIn, { ...image, blob });
  }
  return copies;
}

/**
 * A new job's images written before its record, so no reader finds a record without them, and
 * dropped again when `insert` refuses the job or fails: a refused or failed submission leaves none.
 */
export async function insertWithImages(blobs: JobImageBlobs, job: NewJob, insert: (images: ImagesToStore) => Promise<InsertOutcome>): Promise<InsertOutcome> {
  const images = job.images ?? new Map();
  await blobs.write(job.id, images);
  let outcome: InsertOutcome;
  try {
    outcome = await insert(images);
  } catch (error) {
    if (images.size > 0) await blobs.drop(job.id, "input");
    throw error;
  }
  if ("refused" in outcome && images.size > 0) await blobs.drop(job.id, "input");
  return outcome;
}

export const JOB_IMAGES_FOLDER = "job-images";

/** Job ids are `job_` and base64url; anything else never names a folder. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,100}$/;

export class FileImageBlobs implements JobImageBlobs {
  constructor(private readonly root: string) {}

  private folder(jobId: string): string {
    if (!SAFE_ID.test(jobId)) throw new Error(`job id ${JSON.stringify(jobId.slice(0, 100))} cannot name an image folder`);
    return path.join(this.root, jobId);
  }

  private file(jobId: string, blob: BlobRef): string {
    return path.join(this.folder(jobId), `${blob.part}-${blob.name}`);
  }

  async write(jobId: string, images: ImagesToStore): Promise<void> {
    if (images.size === 0) return;
    const writeOne = async (file: string, bytes: Uint8Array) => {
      await fs.promises.mkdir(path.dirname(file), { recursive: true });
      await fs.promises.writeFile(file, bytes);
    };
    await Promise.all(
      [...images.values()].map(({ image, bytes }) => {
        const file = this.file(jobId, image.blob);
        // Dropping another part may remove the folder between the two steps: then once more.
        return writeOne(file, bytes).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? writeOne(file, bytes) : Promise.reject(error)));
      }),
    );
  }

  /** {@link write}, synchronously: for converting an old store when it is opened, before anything is served. */
  writeSync(jobId: string, images: ImagesToStore): void {
    if (images.size === 0) return;
    fs.mkdirSync(this.folder(jobId), { recursive: true });
    for (const { image, bytes } of images.values()) fs.writeFileSync(this.file(jobId, image.blob), bytes);
  }

  async read(jobId: string, blob: BlobRef): Promise<Buffer | null> {
    try {
      return await fs.promises.readFile(this.file(jobId, blob));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  async reader(jobId: string, blob: BlobRef): Promise<BlobReader | null> {
    const file = this.file(jobId, blob);
    let length: number;
    try {
      length = (await fs.promises.stat(file)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    return { length, chunks: (chunkBytes) => fileChunks(file, length, chunkBytes) };
  }

  async copy(jobId: string, from: BlobRef, to: BlobRef): Promise<void> {
    const target = this.file(jobId, to);
    await fs.promises.rm(target, { force: true });
    // A second name for the same bytes: nothing is copied, and deleting either name leaves the other.
    await fs.promises.link(this.file(jobId, from), target).catch(() => fs.promises.copyFile(this.file(jobId, from), target));
  }

  async remove(jobId: string, blobs: readonly BlobRef[]): Promise<void> {
    await Promise.all(blobs.map((blob) => fs.promises.rm(this.file(jobId, blob), { force: true })));
  }

  async drop(jobId: string, part: BlobPart): Promise<void> {
    const folder = this.folder(jobId);
    let names: string[];
    try {
      names = await fs.promises.readdir(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    const prefix = `${part}-`;
    await Promise.all(names.filter((name) => name.startsWith(prefix)).map((name) => fs.promises.rm(path.join(folder, name), { force: true })));
    // The folder goes with its last blob (another part may still hold some).
    await fs.promises.rmdir(folder).catch(() => undefined);
  }

  /**
   * Deletes the image folders of jobs `isReferenced` denies, last written before `beforeMs`: what a
   * crash between writing a job's images and writing its row leaves behind (the age spares a job
   * whose row is being written). Returns how many went.
   */
  async sweep(isReferenced: (jobId: string) => boolean, beforeMs: number): Promise<number> {
    let ids: string[];
    try {
      ids = await fs.promises.readdir(this.root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
      throw error;
    }
    let swept = 0;
    for (const id of ids) {
      if (!SAFE_ID.test(id) || isReferenced(id)) continue;
      const folder = this.folder(id);
      const stat = await fs.promises.stat(folder).catch(() => undefined);
      if (!stat || stat.mtimeMs >= beforeMs) continue;
      await fs.promises.rm(folder, { recursive: true, force: true });
      swept++;
    }
    return swept;
  }
}

/**
 * `length` bytes of `file`, `chunkBytes` at a time. The handle stays open while they are read: a
 * purge meanwhile removes the file's name, not the bytes being read. Blob files are written once
 * under a new name and never changed, so a short read means the file is not the one measured.
 */
async function* fileChunks(file: string, length: number, chunkBytes: number): AsyncGenerator<Buffer> {
  const handle = await fs.promises.open(file, "r");
  try {
    for (let at = 0; at < length; at += chunkBytes) {
      const size = Math.min(chunkBytes, length - at);
      const chunk = Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(chunk, 0, size, at);
      if (bytesRead !== size) throw new Error(`${file} is shorter than the ${length} bytes it had`);
      yield chunk;
    }
  } finally {
    await handle.close();
  }
}
