/**
 * One bare onnxruntime session in a fresh process, for bench/session-options.ts: creates it from an
 * ONNX file with the session options given as JSON, runs it `runs` times on pseudo-random input
 * shaped from the graph's own metadata (symbolic axes: batch 1, any other `side`), releases it, and
 * prints one JSON line: load and run times, resident memory before, after the runs and after the
 * release, and the process's peak (the kernel's high-water mark, VmHWM).
 *
 *   node --expose-gc bench/support/session-options-child.mjs '{"file":…,"options":{…},"runs":3,"side":256}'
 *
 * Plain JavaScript so each process starts in a fraction of a second; the parent prepares the graph.
 */
// @ts-check
import fs from "node:fs";
import ort from "onnxruntime-node";

/** @type {{file: string, options: import("onnxruntime-node").InferenceSession.SessionOptions, runs: number, side: number}} */
const { file, options, runs, side } = JSON.parse(process.argv[2] ?? "{}");

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

const before = resident();
let started = performance.now();
const session = await ort.InferenceSession.create(file, options);
const loadMs = performance.now() - started;
/** @type {Record<string, ort.Tensor>} */
const feeds = {};
for (const input of session.inputMetadata) {
  if (!input.isTensor) throw new Error(`input ${input.name} is not a tensor`);
  const dims = input.shape.map((dim, axis) => (typeof dim === "number" && dim > 0 ? dim : axis === 0 ? 1 : side));
  const length = dims.reduce((a, b) => a * b, 1);
  const bytes = input.type === "uint8";
  feeds[input.name] = new ort.Tensor(bytes ? "uint8" : "float32", noise(length, bytes), dims);
}
const runMs = [];
for (let i = 0; i < runs; i++) {
  started = performance.now();
  await session.run(feeds);
  runMs.push(performance.now() - started);
}
const afterRuns = resident();
const peak = status("VmHWM");
await session.release();
const afterRelease = resident();
console.log(JSON.stringify({ loadMs, runMs, before, afterRuns, afterRelease, peak }));
