/**
 * Preloaded into a router process by bench/router-event-loop.ts (`--import`): measures the process's
 * event-loop delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution) and CPU time between a
 * `reset` and a `report` message on the IPC channel, and answers the report over the same channel.
 *
 * On a loaded machine the delay also counts the time the scheduler keeps the process off the CPU,
 * so the probe also measures what the router itself holds the loop for: a 1 ms timer reads the main
 * thread's own CPU time (Linux /proc/<pid>/task/<pid>/schedstat, nanoseconds on the CPU) at each
 * turn, and the longest CPU time between two turns is the longest synchronous block, whatever the
 * load. Where schedstat cannot be read it reports null. The block's place in time (process.hrtime,
 * microseconds) comes with it, so a CPU profile of the router can say what ran in it.
 *
 * Garbage collection runs on the main thread inside such blocks, wherever the allocation that
 * triggers it happens to fall: the probe also reports the longest collection pause and how much of
 * the longest block was collection (perf_hooks' `gc` entries), so a block can be told apart from
 * the code that ran in it.
 */
import fs from "node:fs";
import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
let cpuAtReset = process.cpuUsage();
let wallAtReset = performance.now();

const schedstat = (() => {
  try {
    return fs.openSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, "r");
  } catch {
    return undefined;
  }
})();
const text = Buffer.alloc(128);
/** Nanoseconds the main thread has spent on the CPU. */
function mainThreadCpuNs(fd: number): number {
  const length = fs.readSync(fd, text, 0, text.length, 0);
  return Number(text.toString("latin1", 0, length).split(" ")[0]);
}
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
let lastCpuNs = schedstat === undefined ? 0 : mainThreadCpuNs(schedstat);
let lastTurnUs = nowUs();
let longestCpuNs = 0;
let longestBlock = { startUs: 0, endUs: 0 };
/** The collections since the reset: start and duration (performance.now() milliseconds), and kind. */
let collections: { startMs: number; durationMs: number; kind: string }[] = [];
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak callbacks",
};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    collections.push({ startMs: entry.startTime, durationMs: entry.duration, kind: GC_KINDS[entry.detail?.kind ?? -1] ?? "other" });
  }
}).observe({ entryTypes: ["gc"] });
/** process.hrtime microseconds as performance.now() milliseconds. */
const hrtimeUsToPerformanceMs = (us: number) => us / 1000 - (Number(process.hrtime.bigint() / 1000n) / 1000 - performance.now());
if (schedstat !== undefined) {
  const fd = schedstat;
  setInterval(() => {
    const now = mainThreadCpuNs(fd);
    const turnUs = nowUs();
    if (now - lastCpuNs > longestCpuNs) {
      longestCpuNs = now - lastCpuNs;
      longestBlock = { startUs: lastTurnUs, endUs: turnUs };
    }
    lastCpuNs = now;
    lastTurnUs = turnUs;
  }, 1).unref();
}

process.on("message", (message: unknown) => {
  if (message === "reset") {
    histogram.reset();
    cpuAtReset = process.cpuUsage();
    wallAtReset = performance.now();
    longestCpuNs = 0;
    collections = [];
    process.send?.("reset-done");
  } else if (message === "report") {
    const cpu = process.cpuUsage(cpuAtReset);
    const longest = collections.reduce((a, b) => (b.durationMs > a.durationMs ? b : a), { startMs: 0, durationMs: 0, kind: "none" });
    const [blockStartMs, blockEndMs] = [hrtimeUsToPerformanceMs(longestBlock.startUs), hrtimeUsToPerformanceMs(longestBlock.endUs)];
    const gcInBlockMs = collections.reduce(
      (sum, { startMs, durationMs }) => sum + Math.max(0, Math.min(blockEndMs, startMs + durationMs) - Math.max(blockStartMs, startMs)),
      0,
    );
    process.send?.({
      gcMaxMs: longest.durationMs,
      gcMaxKind: longest.kind,
      gcInBlockMs,
      gcTotalMs: collections.reduce((sum, { durationMs }) => sum + durationMs, 0),
      maxMs: histogram.max / 1e6,
      p99Ms: histogram.percentile(99) / 1e6,
      blockCpuMs: schedstat === undefined ? null : longestCpuNs / 1e6,
      longestBlock,
      cpuMs: (cpu.user + cpu.system) / 1000,
      wallMs: performance.now() - wallAtReset,
    });
  }
});
// The channel must not keep a router alive that was asked to stop.
process.channel?.unref();
