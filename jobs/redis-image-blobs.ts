/**
 * The shared job store's image bytes (job-images.ts), in Redis beside the records: one binary
 * string per image, `<prefix>image:<jobId>:<part>:<name>`, and per part a set naming them
 * (`<prefix>images:<jobId>:<part>`), which the store's purge script reads to delete them
 * ({@link DROP_IMAGES_LUA}). Bytes cross the connection in 1 MB pieces, each its own command: a
 * 20 MB command or reply would be copied whole on the router's event loop (by ioredis on the way
 * out, by its parser on the way in). Answers read them a GETRANGE at a time as their client takes
 * them ({@link RedisImageBlobs.reader}), so an open download holds a chunk, never the image.
 */
import type { Redis } from "ioredis";
import type { BlobReader, JobImageBlobs } from "./job-image-blobs.js";
import type { BlobPart, BlobRef, ImagesToStore } from "./job-images.js";

/** Bytes per command. */
const PIECE_BYTES = 1024 * 1024;

/**
 * Lua for the store's scripts, given `P` (the key prefix): `dropImages(id, part)` deletes a part's
 * images (UNLINK: Redis frees them off its main thread).
 */
export const DROP_IMAGES_LUA = `
local function dropImages(id, part)
  local set = P .. 'images:' .. id .. ':' .. part
  for _, key in ipairs(redis.call('SMEMBERS', set)) do redis.call('UNLINK', key) end
  redis.call('UNLINK', set)
end
`;

export class RedisImageBlobs implements JobImageBlobs {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(jobId: string, blob: BlobRef): string {
    return `${this.prefix}image:${jobId}:${blob.part}:${blob.name}`;
  }

  private set(jobId: string, part: BlobPart): string {
    return `${this.prefix}images:${jobId}:${part}`;
  }

  async write(jobId: string, images: ImagesToStore): Promise<void> {
    for (const { image, bytes } of images.values()) {
      const key = this.key(jobId, image.blob);
      // Named in the set first, so a purge that runs meanwhile deletes whatever was written.
      await this.redis.sadd(this.set(jobId, image.blob.part), key);
      await this.redis.del(key);
      for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
        const piece = bytes.subarray(at, at + PIECE_BYTES);
        await this.redis.append(key, Buffer.from(piece.buffer, piece.byteOffset, piece.length));
      }
    }
  }

  async read(jobId: string, blob: BlobRef): Promise<Buffer | null> {
    const key = this.key(jobId, blob);
    const length = await this.redis.strlen(key);
    if (length === 0) return null;
    const bytes = Buffer.allocUnsafe(length);
    for (let at = 0; at < length; at += PIECE_BYTES) {
      const piece = await this.redis.getrangeBuffer(key, at, Math.min(at + PIECE_BYTES, length) - 1);
      // Deleted (or replaced) while being read.
      if (piece.length !== Math.min(PIECE_BYTES, length - at)) return null;
      piece.copy(bytes, at);
    }
    return bytes;
  }

  async reader(jobId: string, blob: BlobRef): Promise<BlobReader | null> {
    const key = this.key(jobId, blob);
    const length = await this.redis.strlen(key);
    if (length === 0) return null;
    const redis = this.redis;
    return {
      length,
      async *chunks(chunkBytes) {
        for (let at = 0; at < length; at += chunkBytes) {
          const size = Math.min(chunkBytes, length - at);
          const chunk = await redis.getrangeBuffer(key, at, at + size - 1);
          // Images are never changed in place: a short piece means it was deleted meanwhile.
          if (chunk.length !== size) throw new Error(`${key} was deleted while being read`);
          yield chunk;
        }
      },
    };
  }

  async copy(jobId: string, from: BlobRef, to: BlobRef): Promise<void> {
    const target = this.key(jobId, to);
    await this.redis.sadd(this.set(jobId, to.part), target);
    // Copied inside Redis: the bytes do not travel.
    await this.redis.copy(this.key(jobId, from), target, "REPLACE");
  }

  async remove(jobId: string, blobs: readonly BlobRef[]): Promise<void> {
    for (const blob of blobs) {
      await this.redis.srem(this.set(jobId, blob.part), this.key(jobId, blob));
      await this.redis.unlink(this.key(jobId, blob));
    }
  }

  async drop(jobId: string, part: BlobPart): Promise<void> {
    const set = this.set(jobId, part);
    const keys = await this.redis.smembers(set);
    await this.redis.unlink(...keys, set);
  }
}
