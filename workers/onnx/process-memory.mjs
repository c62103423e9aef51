// @ts-check
/**
 * The process's resident memory as the kernel counts it, read by the inference thread around every
 * session load and run (so the model budget works from what models really cost) and by the runtime.
 * Plain JavaScript so the inference thread (inference-thread.mjs) can import it without a loader.
 *
 * The peak of a run comes from the kernel's high-water mark (VmHWM in /proc/self/status), reset
 * before the run by writing "5" to /proc/self/clear_refs (Linux 4.0 and later; a process may always
 * write its own). Where that is refused (another OS, a locked-down /proc) the peak falls back to
 * getrusage's maxRSS, which never resets: a run then shows a peak only when it sets a new record.
 * Because the mark is reset, a reader wanting the whole process's peak must ask {@link processPeakBytes},
 * which remembers the marks read before each reset.
 */
import fs from "node:fs";
import v8 from "node:v8";
import vm from "node:vm";

/**
 * A full collection of the calling thread's heap. The heaps here stay small, but they hold the big
 * external buffers a session is made from (a model's bytes: 84 MB for ISNet, read, then copied for
 * the inference thread) and fed with, which V8 would keep until some later collection; freeing them
 * right after a load or a release keeps them out of the next peak (measured on ISNet: the load peaked
 * 0.5 GB over baseline with them alive). A collection of a small heap takes milliseconds.
 */
v8.setFlagsFromString("--expose-gc");
export const collectGarbage = /** @type {() => void} */ (vm.runInNewContext("gc"));

/** Resident bytes of the whole process now. */
export function residentBytes() {
  return process.memoryUsage.rss();
}

/** Highest mark seen before a reset; VmHWM only covers the time since the last one. */
let peakBeforeReset = 0;
let resettable = true;

/** The kernel's high-water mark of resident memory, in bytes (since the last reset, or since start). */
function highWaterMark() {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: getrusage's figure below.
  }
  return process.resourceUsage().maxRSS * 1024;
}

/**
 * Starts a fresh high-water mark at the current resident size; returns false where the kernel does
 * not allow it (the mark then keeps the process's all-time peak).
 */
export function resetPeak() {
  peakBeforeReset = Math.max(peakBeforeReset, highWaterMark());
  if (!resettable) return false;
  try {
    fs.writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    resettable = false;
    return false;
  }
}

/** Peak resident bytes since the last {@link resetPeak} (or since start where reset is refused). */
export function peakSinceReset() {
  return highWaterMark();
}

/**
 * Peak resident bytes of the whole process since it started, across resets. The marks read before
 * resets in other threads of the process are passed in by whoever collected them.
 */
export function processPeakBytes(otherMarks = 0) {
  return Math.max(peakBeforeReset, otherMarks, highWaterMark());
}
