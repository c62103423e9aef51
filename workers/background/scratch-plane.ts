import { keptBetweenCalls } from "../idle-memory.js";

type Samples = Float32Array | Float64Array | Uint8Array;

/**
 * An array kept between calls for a step's intermediate plane. At the working resolution such
 * planes are megabytes each, and allocating (zeroing, later collecting) them on every call showed as
 * garbage collection in the CPU profile of a cutout. Sharing one is safe only for a plane that is
 * filled and finished with inside one synchronous call: the worker runs one JavaScript thread, so no
 * other call can take it meanwhile. Planes a step returns are never scratch.
 */
class Scratch<T extends Samples> {
  private data: T;

  constructor(private readonly make: (length: number) => T) {
    this.data = make(0);
    // Let go with an idle model (workers/idle-memory.ts).
    keptBetweenCalls(() => this.drop());
  }

  drop(): void {
    this.data = this.make(0);
  }

  /** `length` samples with stale contents (overwrite them all), valid until the next `take`. */
  take(length: number): T {
    if (this.data.length < length) this.data = this.make(length);
    return this.data.subarray(0, length) as T;
  }
}

/** Float samples. */
export class ScratchPlane extends Scratch<Float32Array> {
  constructor() {
    super((length) => new Float32Array(length));
  }
}

/** Float64 samples (sums that must keep every float32 digit). */
export class Float64Scratch extends Scratch<Float64Array> {
  constructor() {
    super((length) => new Float64Array(length));
  }
}

/** Byte marks. */
export class ByteScratch extends Scratch<Uint8Array> {
  constructor() {
    super((length) => new Uint8Array(length));
  }
}

/** Where a step gets a float plane it hands on: a new array, or one lent for one removal (PlanePool). */
export type Allocate = (length: number) => Float32Array;

export const freshPlane: Allocate = (length) => new Float32Array(length);

/** Buffers a pool keeps at most: two removals at a time (ATELIER_WORKER_CONCURRENCY) take about six each. */
const POOL_LIMIT = 16;

/**
 * Float planes lent to a removal for its whole length and given back at its end. The working-resolution
 * planes a removal hands from step to step (the guide, its statistics, the coefficient field, the side
 * means) are megabytes each, across awaits, so a ScratchPlane cannot hold them; allocated afresh on
 * every call they counted towards V8's external-memory limit, each crossing of which starts a full
 * collection of the process's whole heap. Removals may interleave, so each takes buffers of its own
 * from the pool; contents are stale (every user overwrites what it reads).
 */
export class PlanePool {
  private readonly free: ArrayBuffer[] = [];

  constructor() {
    keptBetweenCalls(() => this.drop());
  }

  /** Lets the free buffers go; leased ones come back to the pool as usual. */
  drop(): void {
    this.free.length = 0;
  }

  /** A lease: planes from `allocate`, all given back by `release`. */
  lease(): { allocate: Allocate; release(): void } {
    const taken: ArrayBuffer[] = [];
    let released = false;
    return {
      allocate: (length) => {
        const bytes = length * Float32Array.BYTES_PER_ELEMENT;
        // The smallest free buffer that fits.
        let best = -1;
        for (let i = 0; i < this.free.length; i++) {
          const size = this.free[i]!.byteLength;
          if (size >= bytes && (best < 0 || size < this.free[best]!.byteLength)) best = i;
        }
        const buffer = best >= 0 ? this.free.splice(best, 1)[0]! : new ArrayBuffer(bytes);
        // A plane taken after the release (a decode finishing late) is never given back: left to the collector.
        if (!released) taken.push(buffer);
        return new Float32Array(buffer, 0, length);
      },
      release: () => {
        released = true;
        for (const buffer of taken.splice(0)) {
          if (this.free.length < POOL_LIMIT) this.free.push(buffer);
        }
      },
    };
  }
}
