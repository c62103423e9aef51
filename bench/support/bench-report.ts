/**
 * Sections of docs/benchmarks.md: a bench calls {@link appendReport} with a markdown section; when
 * bench/run-all.ts runs it, the section is appended to the file named by {@link REPORT_FILE_VARIABLE},
 * and run-all writes docs/benchmarks.md from the sections of the whole run. Run alone, a bench prints
 * its tables as before and writes nothing.
 */
import fs from "node:fs";

/** Environment variable naming the JSON-lines file run-all collects the sections in. */
export const REPORT_FILE_VARIABLE = "ATELIER_BENCH_REPORT_FILE";

export interface ReportSection {
  title: string;
  markdown: string;
}

export function appendReport(title: string, markdown: string): void {
  const file = process.env[REPORT_FILE_VARIABLE];
  if (file) fs.appendFileSync(file, `${JSON.stringify({ title, markdown } satisfies ReportSection)}\n`);
}

/** The sections in `file`, in the order they were reported; none when it does not exist. */
export function readReport(file: string): ReportSection[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as ReportSection);
}
