/**
 * A float array kept between calls for a step's intermediate plane. At the working resolution such
 * planes are megabytes each, and allocating (zeroing, later collecting) them on every call showed as
 * garbage collection in the CPU profile of a cutout. Sharing one is safe only for a plane that is
 * filled and finished with inside one synchronous call: the worker runs one JavaScript thread, so no
 * other call can take it meanwhile. Planes a step returns are never scratch.
 */
export class ScratchPlane {
  private data = new Float32Array(0);

  /** `length` samples with stale contents (overwrite them all), valid until the next `take`. */
  take(length: number): Float32Array {
    if (this.data.length < length) this.data = new Float32Array(length);
    return this.data.subarray(0, length);
  }
}

/** The same for float64 samples (sums that must keep every float32 digit). */
export class Float64Scratch {
  private data = new Float64Array(0);

  /** `length` samples with stale contents (overwrite them all), valid until the next `take`. */
  take(length: number): Float64Array {
    if (this.data.length < length) this.data = new Float64Array(length);
    return this.data.subarray(0, length);
  }
}

/** The same for byte marks. */
export class ByteScratch {
  private data = new Uint8Array(0);

  /** `length` bytes with stale contents (overwrite them all), valid until the next `take`. */
  take(length: number): Uint8Array {
    if (this.data.length < length) this.data = new Uint8Array(length);
    return this.data.subarray(0, length);
  }
}
