/**
 * Bare onnxruntime sessions in a fresh process, for bench/session-options.ts, on pseudo-random input
 * shaped from the graph's own metadata (symbolic axes: batch 1, any other `side`). Prints one JSON line.
 *
 * - memory: one session from the ONNX file with the session options given; runs it `runs` times,
 *   releases it, and reports load and run times, resident memory before, after the runs and after the
 *   release, and the process's peak (the kernel's high-water mark, VmHWM). One session alone in its
 *   process, so the figures are its own.
 * - time: one session per option set, all alive at once; after a run of each (its first, which pays
 *   its set-up), rounds in which every session runs once, in an order shuffled anew each round, with a
 *   pause after each run so threads that busy-wait after a run have gone to sleep before the next
 *   session's run starts. Right after each run, before the pause, a fixed JavaScript step is timed:
 *   the kind of work the service does after a run (reading the output, the next tile's input), which
 *   threads still busy-waiting compete with for the cores. The process's CPU time from the run's
 *   start to the pause's end, less the step's own time, is the CPU the run took, busy-waiting
 *   included. Reports each session's run times, step times and CPU by round: a ratio taken within one round
 *   compares runs a few seconds apart, so a busy machine or a change of clock speed slows both sides
 *   alike, and no session always runs first or right after a heavy one. Rounds continue until
 *   `minRounds` are done and `budgetMs` has passed, or `maxRounds` are done.
 *
 *   node --expose-gc bench/support/session-options-child.mjs '{"mode":"memory","file":…,"options":{…},"runs":3,"side":256}'
 *   node bench/support/session-options-child.mjs '{"mode":"time","file":…,"candidates":[{…},…],"side":256,"minRounds":5,"maxRounds":15,"budgetMs":20000}'
 *
 * Plain JavaScript so each process starts in a fraction of a second; the parent prepares the graph.
 */
// @ts-check
import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import ort from "onnxruntime-node";

/**
 * @typedef {import("onnxruntime-node").InferenceSession.SessionOptions} Options
 * @type {{mode: "memory" | "time", file: string, side: number, options?: Options, runs?: number,
 *   candidates?: Options[], minRounds?: number, maxRounds?: number, budgetMs?: number}}
 */
const request = JSON.parse(process.argv[2] ?? "{}");
/** Longer than onnxruntime's intra-op threads busy-wait after a run before they sleep. */
const PAUSE_MS = 50;

/** @param {string} field */
function status(field) {
  const match = fs.readFileSync("/proc/self/status", "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
  return match ? Number(match[1]) * 1024 : 0;
}
const resident = () => {
  globalThis.gc?.();
  return status("VmRSS");
};

/**
 * Deterministic noise: the same input in every process, and no all-zero fast paths.
 * @param {number} length
 * @param {boolean} bytes
 */
function noise(length, bytes) {
  const data = bytes ? new Uint8Array(length) : new Float32Array(length);
  let state = 12345;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    data[i] = bytes ? state >>> 24 : (state >>> 8) / 16777216;
  }
  return data;
}

/** @param {ort.InferenceSession} session */
function feedsFor(session) {
  /** @type {Record<string, ort.Tensor>} */
  const feeds = {};
  for (const input of session.inputMetadata) {
    if (!input.isTensor) throw new Error(`input ${input.name} is not a tensor`);
    const dims = input.shape.map((dim, axis) => (typeof dim === "number" && dim > 0 ? dim : axis === 0 ? 1 : request.side));
    const length = dims.reduce((a, b) => a * b, 1);
    const bytes = input.type === "uint8";
    feeds[input.name] = new ort.Tensor(bytes ? "uint8" : "float32", noise(length, bytes), dims);
  }
  return feeds;
}

/** The fixed JavaScript step after a run; returns its ms. */
function step() {
  const started = performance.now();
  let sum = 0;
  for (let k = 0; k < 3e6; k++) sum += Math.sqrt(k);
  if (sum < 0) throw new Error("unreachable");
  return performance.now() - started;
}

/** @param {ort.InferenceSession} session @param {Record<string, ort.Tensor>} feeds */
async function timed(session, feeds) {
  const started = performance.now();
  await session.run(feeds);
  return performance.now() - started;
}

async function memory() {
  const before = resident();
  const started = performance.now();
  const session = await ort.InferenceSession.create(request.file, request.options);
  const loadMs = performance.now() - started;
  const feeds = feedsFor(session);
  const runMs = [];
  for (let i = 0; i < (request.runs ?? 3); i++) runMs.push(await timed(session, feeds));
  const afterRuns = resident();
  const peak = status("VmHWM");
  await session.release();
  const afterRelease = resident();
  return { loadMs, runMs, before, afterRuns, afterRelease, peak };
}

/** A small seeded generator, so a rerun shuffles the same way. */
function random(seed = 2463534242) {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

async function time() {
  const candidates = request.candidates ?? [];
  /** @type {ort.InferenceSession[]} */
  const sessions = [];
  for (const options of candidates) sessions.push(await ort.InferenceSession.create(request.file, options));
  const [first] = sessions;
  if (!first) throw new Error("no candidates");
  const feeds = feedsFor(first);
  const firstMs = [];
  for (const session of sessions) {
    firstMs.push(await timed(session, feeds));
    await sleep(PAUSE_MS);
  }
  const next = random();
  /** @type {number[][]} run ms by round, then by candidate */
  const rounds = [];
  /** @type {number[][]} the step's ms after each run, likewise */
  const steps = [];
  /** @type {number[][]} CPU ms of each run and its pause (every thread of the process), likewise */
  const cpu = [];
  const started = performance.now();
  const { minRounds = 5, maxRounds = 15, budgetMs = 20_000 } = request;
  while (rounds.length < maxRounds && (rounds.length < minRounds || performance.now() - started < budgetMs)) {
    const order = sessions.map((session, index) => ({ session, index, key: next() })).sort((a, b) => a.key - b.key);
    const times = new Array(sessions.length).fill(0);
    const after = new Array(sessions.length).fill(0);
    const used = new Array(sessions.length).fill(0);
    for (const { session, index } of order) {
      const cpuBefore = process.cpuUsage();
      times[index] = await timed(session, feeds);
      after[index] = step();
      await sleep(PAUSE_MS);
      const { user, system } = process.cpuUsage(cpuBefore);
      used[index] = (user + system) / 1000 - after[index];
    }
    rounds.push(times);
    steps.push(after);
    cpu.push(used);
  }
  for (const session of sessions) await session.release();
  return { firstMs, rounds, steps, cpu };
}

console.log(JSON.stringify(request.mode === "time" ? await time() : await memory()));
