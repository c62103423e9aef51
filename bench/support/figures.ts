/** The small figures every bench prints: the median or a percentile of a set of measurements and the machine's load average. */
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

/** The load average over 1, 5 and 15 minutes, as printed beside each figure: "2.1 2.3 2.5". */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(" ");
}
