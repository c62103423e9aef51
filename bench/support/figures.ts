/**
 * The small figures every bench prints: the median or a percentile of a set of measurements, the
 * machine, its load average and its speed.
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
  const bytes = Buffer.alloc(64 * 1024 * 1024, 0x5a);
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    createHash("sha256").update(bytes).digest();
    best = Math.min(best, performance.now() - started);
  }
  return Math.round(best);
}
