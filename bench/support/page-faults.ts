/**
 * Page faults of a process so far, from Linux's /proc/<pid>/stat: how much of its memory it had to
 * map again. A first call after a long idle that faults thousands of pages was slowed by the
 * machine taking idle memory back (a VM host's proactive reclaim, say), not by the service.
 */
import fs from "node:fs";

/** Minor plus major faults of `pid` so far; undefined where /proc cannot tell (not Linux, process gone). */
export function pageFaults(pid: number): number | undefined {
  try {
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ")" do not.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // minflt and majflt are fields 10 and 12 of proc(5); fields[0] is field 3.
    return Number(fields[7]) + Number(fields[9]);
  } catch {
    return undefined;
  }
}
