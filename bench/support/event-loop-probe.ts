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
 */
import fs from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

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
    process.send?.("reset-done");
  } else if (message === "report") {
    const cpu = process.cpuUsage(cpuAtReset);
    process.send?.({
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
