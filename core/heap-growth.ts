/**
 * How far V8 lets a JavaScript heap grow past what its last full collection kept before it starts
 * the next one: a fixed factor of 1 + HEAP_GROWING_PERCENT / 100, set for the whole process when a
 * router or a worker starts.
 *
 * Why: an image call puts megabytes into the old generation at once. The body's text and the data
 * URL parsed out of it are large strings, and a call's Buffers add tens of megabytes of external
 * memory. V8's own heap growth, tuned for pages that allocate little, left the limit so close to the
 * service's ~70 MB live heap that nearly every call started a full mark-compact. That cost 20–45 ms of
 * main-thread marking and pauses per call, on the path of the decode, the encode and the JSON.
 *
 * Measured with service processes of each setting taking turns at the same calls (10–20 each,
 * medians, 1024x1024 photo for the styles, LSDIR x4 to 1 MP):
 * - mark-compacts on 10 candy-lite calls: 12 on V8's own schedule, 4 with 300 %;
 * - V8's own against 300 %: udnie 2697 against 2490 ms, candy-lite 971 against 950 ms, the upscale
 *   579 against 545 ms, with 380, 50 and 60 ms less CPU per call; 100 % gained about two thirds as
 *   much on candy-lite.
 * The price is garbage held longer: peak resident memory 20–48 MB higher over those calls; ISNet's
 * 1 MP whole-process peak 1067 and 1047 MiB in two sets against 1047, the mixed soak's 1348 against
 * 1343 MiB (bench/model-memory.ts).
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
