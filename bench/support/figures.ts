/** The small figures every bench prints: the median of a set of measurements and the machine's load average. */
import os from "node:os";

/** The median; of an even count, the upper of the two middle values. */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** The load average over 1, 5 and 15 minutes, as printed beside each figure: "2.1 2.3 2.5". */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(" ");
}
