/**
 * The small figures every bench prints: the median or a percentile of a set of measurements, the
 * machine, its load average, its speed and what fresh memory costs on it.
 */
import { createHash } from "node:crypto";
import os from "node:os";

/** The value a `fraction` of the way up the sorted values: the one at index ⌊n × fraction⌋, at most the last. */
export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

/** The median; of an even count, the upper of the two middle values. */
export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** The machine the figures were measured on: "AMD EPYC x2, 24 GiB, node v20.20.2". */
export function machineDescription(): string {
  return `${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`;
}

/** The load average over 1, 5 and 15 minutes, as printed beside each figure: "2.1 2.3 2.5". */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(" ");
}

/**
 * The machine's speed now, as the milliseconds one core takes to hash 64 MiB with SHA-256 (the best
 * of three). Inside a virtual machine the load average counts only this machine's own processes, and
 * where the guest is not told of the time the host gives its core to others, that time counts as the
 * process's own CPU time: a figure above the machine's usual one says the absolute times beside it,
 * CPU times included, are inflated by the host, not by the code. A busy second core does not move it.
 */
export function speedProbeMs(): number {
  const bytes = Buffer.alloc(PROBE_BYTES, 0x5a);
  return bestOfThreeMs(() => createHash("sha256").update(bytes).digest());
}

/**
 * What fresh memory costs on this machine now, as the milliseconds to fill 64 MiB just allocated (the
 * best of three). Each page touched for the first time is a fault the kernel serves, and in a virtual
 * machine whose host backs the guest's memory lazily, the host too, at many times the cost of the
 * filling itself. Where this figure is high, work that allocates large buffers afresh (decoded
 * images, tensors, base64) costs more than its arithmetic, and the malloc settings
 * (workers/onnx/allocator-settings.ts) weigh more than elsewhere.
 */
export function freshMemoryProbeMs(): number {
  return bestOfThreeMs(() => {
    const bytes = Buffer.alloc(PROBE_BYTES, 0x5a);
    if (bytes[bytes.length - 1] !== 0x5a) throw new Error("Buffer.alloc did not fill the probe's buffer");
  });
}

/** What each probe works through: 64 MiB. */
const PROBE_BYTES = 64 * 1024 * 1024;

/** The shortest of three timings of `work`, in whole milliseconds. */
function bestOfThreeMs(work: () => unknown): number {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    work();
    best = Math.min(best, performance.now() - started);
  }
  return Math.round(best);
}
