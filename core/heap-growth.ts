/**
 * How far V8 lets a JavaScript heap grow past what its last full collection kept before it starts
 * the next one: a fixed factor of 1 + HEAP_GROWING_PERCENT / 100, set for the whole process when a
 * router or a worker starts.
 *
 * Why: an image call puts megabytes into the old generation at once. The body's text and the data
 * URL parsed out of it are large strings, and a call's Buffers add tens of megabytes of external
 * memory. V8's own heap growth, tuned for pages that allocate little, left the limit so close to the
 * service's live heap that nearly every call started a full mark-compact, whose marking and pauses
 * fell on the main thread, on the path of the decode, the encode and the JSON. With this factor, far
 * fewer calls start one, each call costs less CPU and time, and the price is garbage held longer: a
 * somewhat higher peak resident memory (service processes of each setting taking turns at the same
 * calls; bench/model-memory.ts for the whole-process peaks).
 *
 * V8 reads the flag each time it sets a new limit, so setting it after start-up takes effect, for
 * every isolate of the process (the inference thread's too); no launcher has to pass it.
 */
import v8 from "node:v8";

export const HEAP_GROWING_PERCENT = 300;

/** Sets {@link HEAP_GROWING_PERCENT} for this process; calling it again changes nothing. */
export function setServiceHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
