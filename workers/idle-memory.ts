/**
 * Memory the worker keeps between calls for speed, let go when a model is released for having been
 * idle (ATELIER_MODEL_IDLE_RELEASE_MS; the large models ask for it). Kept for good, it would stay
 * long after the model it served: after one ISNet removal at 1 MP, about 60 MB of working planes,
 * and libvips' cache of recent operations and their pixels. The next call of the released model
 * loads it again for seconds; making these afresh costs a small part of that.
 */
import sharp from "sharp";

const droppers: Array<() => void> = [];

/** Registers what `drop` lets go of as memory kept between calls. */
export function keptBetweenCalls(drop: () => void): void {
  droppers.push(drop);
}

/** Lets go of all memory kept between calls. Safe at any time: running work keeps what it holds. */
export function dropKeptMemory(): void {
  for (const drop of droppers) drop();
}

// libvips caches recent operations with their pixels (50 MB by its own count, more in fact), which
// helps within a call (one source decoded for several steps) and only holds memory between calls.
// Turning the cache off and on again empties it and restores sharp's default limits.
keptBetweenCalls(() => {
  sharp.cache(false);
  sharp.cache(true);
});
