/**
 * One client of bench/upscale-concurrency.ts's bare side, in its own worker thread: a bare
 * onnxruntime session created with onnxruntime's default options (no options at all: every core,
 * spinning threads, arena and memory pattern on, as a user of onnxruntime-node gets it), run once on
 * creation so the timed calls are warm. onnxruntime-node runs a session synchronously on the calling
 * thread, so clients that should overlap need a thread, and a session, each.
 *
 * workerData: `{ graph: Uint8Array, inputName: string, input: Float32Array, dims: number[] }`.
 * Posts `{ ready: true, outputDims }` once warm; then, for each `{ windowMs }` message, runs the graph
 * back to back, starting a run only while `windowMs` has not passed, and posts
 * `{ latencies: number[], busyMs: number }` (busyMs: from the first run's start to the last one's end).
 * A `{ close: true }` message releases the session and ends the thread.
 *
 * Plain JavaScript so the thread starts without a TypeScript loader.
 */
// @ts-check
import { parentPort, workerData } from "node:worker_threads";
import ort from "onnxruntime-node";

/** @type {{ graph: Uint8Array, inputName: string, input: Float32Array, dims: number[] }} */
const { graph, inputName, input, dims } = workerData;
const port = parentPort;
if (!port) throw new Error("bare-session-client.mjs runs as a worker thread.");

const session = await ort.InferenceSession.create(graph);
const feeds = { [inputName]: new ort.Tensor("float32", input, dims) };
const warm = await session.run(feeds);
const output = warm[session.outputNames[0] ?? ""];
port.postMessage({ ready: true, outputDims: output ? [...output.dims] : [] });

port.on("message", async (/** @type {{ windowMs?: number, close?: boolean }} */ message) => {
  if (message.close) {
    await session.release();
    // Ends this thread only.
    process.exit(0);
  }
  const windowMs = message.windowMs ?? 0;
  /** @type {number[]} */
  const latencies = [];
  const started = performance.now();
  while (performance.now() - started < windowMs) {
    const callStarted = performance.now();
    await session.run(feeds);
    latencies.push(performance.now() - callStarted);
  }
  port.postMessage({ latencies, busyMs: performance.now() - started });
});
