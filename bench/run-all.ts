/**
 * Runs the whole bench set, one bench after another, each in its own process, after fetching what
 * they need (the test photographs, scripts/fetch-test-photos.sh). Prints the machine and the load
 * average before every bench and how long each took, so figures from a loaded machine are recognisable:
 * the benches print ratios measured within one run, which is what survives a busy machine.
 *
 *   npm run bench                        # the set below, sized to finish within 15 minutes on 2 cores
 *   npm run bench -- memory upscale      # only the named ones
 *
 * A bench that fails is reported and the set goes on; the exit status is non-zero if any failed.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { testPhotos } from "../test/support/test-assets.js";

/** Name, script and arguments: light settings, so the set stays within 15 minutes on 2 cores. */
const BENCHES: [name: string, script: string, args: string[]][] = [
  ["memory", "bench/model-memory.ts", ["--soak", "60"]],
  ["upscale", "bench/upscale-bench.ts", ["quality", "--sets=reporting", "--models=lsdir-compact-x4", "speed", "rest"]],
  ["background", "bench/background.ts", ["--runs", "3"]],
  ["style", "bench/style-transfer.ts", []],
  ["png", "bench/png-encode.ts", []],
  ["router-memory", "bench/router-memory.ts", []],
  ["router-event-loop", "bench/router-event-loop.ts", ["--runs", "3"]],
  ["jobs", "bench/jobs.ts", ["100", "5"]],
  ["soak", "bench/soak.ts", ["60", "4"]],
];

const load = () => os.loadavg().map((value) => value.toFixed(1)).join(" ");

if (!fs.existsSync(path.join(testPhotos, "chelsea.png"))) {
  console.log(`fetching test photos into ${testPhotos}`);
  const fetched = spawnSync("bash", ["scripts/fetch-test-photos.sh"], { stdio: "inherit" });
  if (fetched.status !== 0) console.log("warning: the test photos could not be fetched; benches that need them will say so");
}

const wanted = process.argv.slice(2);
const selected = BENCHES.filter(([name]) => wanted.length === 0 || wanted.includes(name));
console.log(`${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}; load ${load()}`);
const summary: string[] = [];
let failed = 0;
const started = performance.now();
for (const [name, script, args] of selected) {
  console.log(`\n=== ${name}: ${script} ${args.join(" ")} (load ${load()})`);
  const benchStarted = performance.now();
  const result = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", script, ...args], { stdio: "inherit", env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "silent" } });
  const seconds = Math.round((performance.now() - benchStarted) / 1000);
  if (result.status !== 0) failed++;
  summary.push(`${name}: ${result.status === 0 ? "ok" : `failed (${result.status ?? result.signal})`} in ${seconds} s, load after ${load()}`);
}
console.log(`\n=== summary (${Math.round((performance.now() - started) / 1000)} s in all)\n${summary.join("\n")}`);
process.exitCode = failed > 0 ? 1 : 0;
