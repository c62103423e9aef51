/**
 * Preloaded into a router process by bench/router-event-loop.ts (`--import`): measures the process's
 * event-loop delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution) and CPU time between a
 * `reset` and a `report` message on the IPC channel, and answers the report over the same channel.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
let cpuAtReset = process.cpuUsage();
let wallAtReset = performance.now();

process.on("message", (message: unknown) => {
  if (message === "reset") {
    histogram.reset();
    cpuAtReset = process.cpuUsage();
    wallAtReset = performance.now();
    process.send?.("reset-done");
  } else if (message === "report") {
    const cpu = process.cpuUsage(cpuAtReset);
    process.send?.({
      maxMs: histogram.max / 1e6,
      p99Ms: histogram.percentile(99) / 1e6,
      cpuMs: (cpu.user + cpu.system) / 1000,
      wallMs: performance.now() - wallAtReset,
    });
  }
});
// The channel must not keep a router alive that was asked to stop.
process.channel?.unref();
