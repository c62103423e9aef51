/**
 * The performance goals as the benches measure them. A bench calls {@link reportGoal} where it prints a
 * goal's figure; when bench/run-all.ts runs it, the row is appended as one JSON line to the file
 * named by {@link GOALS_FILE_VARIABLE}, and run-all prints every row in one closing table. Run alone,
 * a bench prints its figures as before and writes nothing.
 */
import fs from "node:fs";

/** Environment variable naming the JSON-lines file run-all collects the rows in. */
export const GOALS_FILE_VARIABLE = "ATELIER_BENCH_GOALS_FILE";

export interface GoalRow {
  /** The goal as the issue states it, e.g. "upscale REST / bare session at 1 MP ≤ 1.10". */
  goal: string;
  /** The figure the bench measured, with its unit, e.g. "1.07x" or "+0.62 dB". */
  measured: string;
  met: boolean;
}

export function reportGoal(row: GoalRow): void {
  const file = process.env[GOALS_FILE_VARIABLE];
  if (file) fs.appendFileSync(file, `${JSON.stringify(row)}\n`);
}

/**
 * What a ratio goal's row says when its bound is below the contract floor measured in the same run
 * (the bare run plus the floor, over the bare run: what any server of the contract pays around the
 * network, bench/support/contract-floor.ts): no server could meet it on that machine, and the row
 * says so instead of reading as the service's miss. Empty when the bound is above the floor.
 */
export function boundBelowFloor(bound: number, floorRatio: number): string {
  return floorRatio > bound ? `; the bound is below the contract floor of this run (${floorRatio.toFixed(2)}x): no server of the contract meets it here` : "";
}

/** The rows in `file`, in the order they were reported; none when it does not exist. */
export function readGoals(file: string): GoalRow[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as GoalRow);
}
