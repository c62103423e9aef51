/**
 * Runs the whole bench set, one bench after another, each in its own process, after fetching what
 * they need (the test photographs, scripts/fetch-test-photos.sh). Prints the machine, the load
 * average and a speed probe (which the host's other guests move, where the load average cannot show
 * them) before every bench and how long each took, so figures from a loaded machine are recognisable:
 * the benches print ratios measured within one run, which is what survives a busy machine. Last, one
 * table of the performance goals: each bench reports the goals it measures (bench/support/goal-rows.ts)
 * into a file this script names in ATELIER_BENCH_GOALS_FILE, and a goal no bench reported (its bench
 * failed or was not selected) is listed as not measured.
 *
 *   npm run bench                        # the set below: about 50 minutes on a quiet 2-core machine
 *   npm run bench -- memory upscale      # only the named ones
 *
 * A bench that fails is reported and the set goes on; the exit status is non-zero if any failed.
 *
 * The whole default set also writes docs/benchmarks.md: the date, the commit, the machine and the load, the sections the
 * benches reported (bench/support/bench-report.ts: their tables, each with its anchors, what a user
 * would run instead, measured in the same run) and the goals table. A run of named benches leaves it
 * as it is, so the page always shows one whole run.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { testPhotos } from "../test/support/test-assets.js";
import { ALLOCATOR_ENV } from "../workers/onnx/allocator-settings.js";
import { readReport, REPORT_FILE_VARIABLE } from "./support/bench-report.js";
import { GOALS_FILE_VARIABLE, readGoals } from "./support/goal-rows.js";
import { freshMemoryProbeMs, loadAverage as load, machineDescription, speedProbeMs } from "./support/figures.js";

interface Bench {
  name: string;
  script: string;
  /** Light settings, so the whole set stays within about 50 minutes on a quiet 2-core machine. */
  args: string[];
  /**
   * Seconds it takes with these arguments in a whole run on a quiet 2-core machine (nothing else
   * running), rounded up; the summary prints them beside the real times, so a bench that grew shows.
   */
  estimatedSeconds: number;
  /** The performance goals it reports, by the start of their text, so a missing one shows. */
  goals: string[];
  /** Run only when named: it measures no performance goal and would push the set past its time. */
  onRequest?: boolean;
}

/**
 * The set. Left out for time: the upscale speed table, the TF.js comparison beyond ESRGAN slim, non-goal REST cases, the
 * background accuracy tables, the style bench beyond its overhead section, glibc's default allocator
 * in the memory bench (each is a command of its own; see each bench's header), and the PNG encoder
 * settings (`npm run bench -- png`).
 */
const BENCHES: Bench[] = [
  {
    name: "memory",
    script: "bench/model-memory.ts",
    args: ["--allocator", "tuned", "--soak", "30"],
    estimatedSeconds: 70,
    goals: ["ISNet at 1 MP: whole-process peak", "ISNet released when idle: whole process back within 100 MB"],
  },
  {
    name: "upscale",
    script: "bench/upscale-bench.ts",
    // TF.js, the anchor for the ESRGAN graphs, on its lightest case alone (one crop, ESRGAN slim).
    args: ["quality", "--sets=reporting", "--models=lsdir-compact-x4", "tfjs", "--tfjs-models=slim", "rest-goals"],
    estimatedSeconds: 220,
    goals: [
      "default upscale x2: mean",
      "default upscale x2: no photo",
      "default upscale x4: mean",
      "default upscale x4: no photo",
      "upscale REST / bare session at 1 MP",
      "upscale REST / bare session at 12 MP",
    ],
  },
  {
    name: "upscale-concurrency",
    script: "bench/upscale-concurrency.ts",
    // 1, 2, 4 and 8 clients, 7 s windows per side (REST, bare sessions, the contract floor) until
    // each side has made 100 calls (from 1.3 to 2.9 calls a second a side: 6 to 11 rounds a level),
    // after the service's start and eight bare sessions' loads.
    args: [],
    estimatedSeconds: 720,
    goals: ["upscale REST ≥ 0.95x bare throughput at concurrency", "upscale REST p99 ≤ bare p99 at concurrency"],
  },
  {
    name: "background",
    script: "bench/background.ts",
    // Five runs: ISNet's bare session varies by a few percent from run to run on 2 cores, as much as
    // the goals' margins; three gave medians from 1.08 to 1.14 at 1 MP between consecutive sets.
    args: ["--skip-accuracy", "--runs", "5"],
    // With the anchor (@imgly on six photos, a warm-up call and five runs each side, about 7 s a pair):
    // about 220 s more than the speed section alone.
    estimatedSeconds: 590,
    goals: [
      "ISNet REST / bare session at 1 MP",
      "ISNet REST / bare session at 12 MP",
      "portrait (",
      "ISNet ≥ 1.3x faster than @imgly",
      "ISNet mattes IoU",
    ],
  },
  {
    name: "first-calls",
    script: "bench/first-calls.ts",
    args: [],
    // Five fresh starts of the service, each its start and warm-up (ISNet's load and a run among
    // them), then four calls of each operation on a 1 MP photo, upscale x4 (16 MP out) and background
    // removal the longest.
    estimatedSeconds: 400,
    goals: [
      "first call ≤ 1.3x a warm one: background removal",
      "first call ≤ 1.3x a warm one: upscale x2",
      "first call ≤ 1.3x a warm one: upscale x4",
      "first call ≤ 1.3x a warm one: style transfer",
      "first call ≤ 1.3x a warm one: prompt improvement",
      "first call ≤ 1.3x a warm one: generation",
    ],
  },
  {
    name: "session-options",
    script: "bench/session-options.ts",
    args: ["--rounds", "3", "--runs", "3"],
    // ESRGAN thick and ISNet are most of it: per model, a process per option set for its memory (a
    // load and three runs), then seven sessions in one process, a first run and three rounds each;
    // the short graphs take rounds for up to 15 s each.
    estimatedSeconds: 930,
    goals: ["every model at least as fast as a bare onnxruntime session"],
  },
  { name: "style", script: "bench/style-transfer.ts", args: ["overhead"], estimatedSeconds: 215, goals: ["style transfer ("] },
  { name: "router-event-loop", script: "bench/router-event-loop.ts", args: ["--runs", "5"], estimatedSeconds: 250, goals: ["router event loop"] },
  { name: "png", script: "bench/png-encode.ts", args: [], estimatedSeconds: 120, goals: [], onRequest: true },
  // ISNet's input side, threads and graph optimisation against matte accuracy: what its catalog entry
  // chose from. Four sessions load and score the eight composites (the smaller sides are refused at once).
  {
    name: "isnet-settings",
    script: "bench/background.ts",
    args: ["--skip-accuracy", "--skip-speed", "--skip-anchor", "--isnet-settings", "--runs", "2", "--rounds", "2"],
    estimatedSeconds: 280,
    goals: [],
  },
  { name: "router-memory", script: "bench/router-memory.ts", args: [], estimatedSeconds: 45, goals: [] },
  { name: "jobs", script: "bench/jobs.ts", args: ["100", "5"], estimatedSeconds: 15, goals: [] },
  { name: "soak", script: "bench/soak.ts", args: ["30", "4"], estimatedSeconds: 40, goals: [] },
];

if (!fs.existsSync(path.join(testPhotos, "chelsea.png"))) {
  console.log(`fetching test photos into ${testPhotos}`);
  const fetched = spawnSync("bash", ["scripts/fetch-test-photos.sh"], { stdio: "inherit" });
  if (fetched.status !== 0) console.log("warning: the test photos could not be fetched; benches that need them will say so");
}

const wanted = process.argv.slice(2);
const selected = BENCHES.filter(({ name, onRequest }) => (wanted.length === 0 ? !onRequest : wanted.includes(name)));
const expected = selected.reduce((sum, bench) => sum + bench.estimatedSeconds, 0);
const machine = machineDescription();
const freshMemoryAtStart = freshMemoryProbeMs();
console.log(`${machine}; load ${load()}; speed probe ${speedProbeMs()} ms; fresh memory probe ${freshMemoryAtStart} ms`);
console.log(`${selected.map(({ name }) => name).join(", ")}: about ${Math.round(expected / 60)} min on a quiet 2-core machine`);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-bench-goals-"));
const goalsFile = path.join(scratch, "goals.jsonl");
const reportFile = path.join(scratch, "report.jsonl");
const loadAtStart = load();
/** The commit the figures belong to, marked when the tree had changes not yet committed. */
const commit = (() => {
  const head = spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" });
  if (head.status !== 0) return "no git commit";
  const dirty = spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { encoding: "utf8" }).stdout.trim() !== "";
  return `commit ${head.stdout.trim()}${dirty ? " with uncommitted changes" : ""}`;
})();
const summary: string[] = [];
let failed = 0;
const started = performance.now();
for (const { name, script, args, estimatedSeconds } of selected) {
  const speedBefore = speedProbeMs();
  console.log(`\n=== ${name}: ${script} ${args.join(" ")} (load ${load()}; speed probe ${speedBefore} ms; about ${estimatedSeconds} s on a quiet 2-core machine)`);
  const benchStarted = performance.now();
  const result = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", script, ...args], {
    stdio: "inherit",
    // glibc's settings as `npm start` sets them (allocator-settings.ts): they change how much fresh
    // memory each call faults in, so timings without them are not the service's.
    env: { ...process.env, ...ALLOCATOR_ENV, LOG_LEVEL: process.env.LOG_LEVEL ?? "silent", [GOALS_FILE_VARIABLE]: goalsFile, [REPORT_FILE_VARIABLE]: reportFile },
  });
  const seconds = Math.round((performance.now() - benchStarted) / 1000);
  if (result.status !== 0) failed++;
  summary.push(
    `${name}: ${result.status === 0 ? "ok" : `failed (${result.status ?? result.signal})`} in ${seconds} s (estimate ${estimatedSeconds}), ` +
      `load after ${load()}, speed probe ${speedBefore} ms before and ${speedProbeMs()} ms after`,
  );
}
console.log(`\n=== summary (${Math.round((performance.now() - started) / 1000)} s in all)\n${summary.join("\n")}`);

const reported = readGoals(goalsFile);
const missing = selected.flatMap(({ name, goals }) =>
  goals.filter((start) => !reported.some((row) => row.goal.startsWith(start))).map((start) => `| ${start}… | not measured (${name} did not report it) | no |`),
);
console.log(`\n=== performance goals (load ${load()})\n\n| goal | measured | met |\n|---|---|---|`);
for (const row of reported) console.log(`| ${row.goal} | ${row.measured} | ${row.met ? "yes" : "no"} |`);
for (const line of missing) console.log(line);

if (wanted.length === 0) {
  const page = [
    "# Benchmarks",
    "",
    `Written by \`npm run bench\` (bench/run-all.ts) on ${new Date().toISOString().slice(0, 10)} at ${commit}: ${machine}; load average ${loadAtStart} at the start, ${load()} at the end; ` +
      `fresh memory probe ${freshMemoryAtStart} ms at the start, ${freshMemoryProbeMs()} ms at the end (the milliseconds to fill 64 MiB just allocated, bench/support/figures.ts: each first touch of a page is a fault, which costs far more in some virtual machines than on bare hardware, and weighs on every step that allocates large buffers afresh). ` +
      "Each figure that compares two things (the service and a bare onnxruntime session, the service and another package) is a ratio measured within one run, interleaved, which is what survives a busy machine; absolute times are this machine's at that load and speed: each bench's entry below gives the speed probe before and after it (the milliseconds one core takes to hash 64 MiB, bench/support/figures.ts; a higher figure means the host was slowing this machine).",
    "",
    `Benches: ${summary.join("; ")}.`,
    ...readReport(reportFile).flatMap(({ title, markdown }) => ["", `## ${title}`, "", markdown]),
    "",
    "## Goals",
    "",
    "| goal | measured | met |",
    "|---|---|---|",
    ...reported.map((row) => `| ${row.goal} | ${row.measured} | ${row.met ? "yes" : "no"} |`),
    ...missing,
    "",
  ];
  fs.writeFileSync(path.join("docs", "benchmarks.md"), page.join("\n"));
  console.log("\nwrote docs/benchmarks.md");
} else console.log("\ndocs/benchmarks.md left as it is: only part of the set ran");
fs.rmSync(scratch, { recursive: true, force: true });
process.exitCode = failed > 0 ? 1 : 0;
