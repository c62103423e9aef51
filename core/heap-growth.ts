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
 * Measured with service processes of each setting taking turns at the same calls (16–20 each,
 * medians; style candy-lite on a 1024x1024 photo, and LSDIR x4 to 1 MP):
 * - V8's own: mark-compacts on 12 of 10 style calls, style 1026–1100 ms, 1820–1940 ms of CPU per call;
 * - 100 %: style 983–1022 ms, 1680–1760 ms of CPU;
 * - 300 %: 4 mark-compacts on 10 style calls, style 960–999 ms, 1660–1720 ms of CPU; upscale 590
 *   against 597 ms, 1060 against 1120 ms of CPU.
 * The price is garbage held longer: the process's peak resident memory over those style calls was
 * 32–48 MB higher. bench/model-memory.ts and bench/soak.ts measure it with the rest of the service.
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
