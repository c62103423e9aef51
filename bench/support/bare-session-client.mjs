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
 * For each `{ infer: { data, width, height } }` message (interleaved RGB bytes), it does one call's
 * work as a bare server of the contract would around its session, for the bench's contract floor:
 * makes the NCHW tensor of values 0..1 (the graph's format, which the bench checks), runs it, and posts
 * the output back as interleaved RGB bytes, `{ data, width, height }`, the buffer transferred.
 * A `{ close: true }` message releases the session and ends the thread.
 *
 * Plain JavaScript so the thread starts without a TypeScript loader.
 */
// @ts-check
import { parentPort, workerData } from "node:worker_threads";
import ort from "onnxruntime-node";

/** @type {{ graph: Uint8Array, inputName: string, input: Float32Array, dims: number[] }} */
const { graph, inputName, input, dims } = workerData;
if (!parentPort) throw new Error("bare-session-client.mjs runs as a worker thread.");
const port = parentPort;

const session = await ort.InferenceSession.create(graph);
const feeds = { [inputName]: new ort.Tensor("float32", input, dims) };
const warm = await session.run(feeds);
const output = warm[session.outputNames[0] ?? ""];
port.postMessage({ ready: true, outputDims: output ? [...output.dims] : [] });

/**
 * One call's work on interleaved RGB bytes: planar floats in, the run, interleaved bytes out.
 * @param {{ data: Uint8Array, width: number, height: number }} image
 */
async function infer({ data, width, height }) {
  const pixels = width * height;
  const input = new Float32Array(pixels * 3);
  for (let c = 0; c < 3; c++) for (let p = 0, from = c; p < pixels; p++, from += 3) input[c * pixels + p] = /** @type {number} */ (data[from]) / 255;
  const outputs = await session.run({ [inputName]: new ort.Tensor("float32", input, [1, 3, height, width]) });
  const output = outputs[session.outputNames[0] ?? ""];
  if (!output) throw new Error("the bare session answered no output");
  const outHeight = Number(output.dims[2]);
  const outWidth = Number(output.dims[3]);
  const values = /** @type {Float32Array} */ (output.data);
  const outPixels = outHeight * outWidth;
  const bytes = new Uint8Array(outPixels * 3);
  for (let c = 0; c < 3; c++) {
    for (let p = 0, to = c; p < outPixels; p++, to += 3) {
      const v = Math.round(/** @type {number} */ (values[c * outPixels + p]) * 255);
      bytes[to] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
  port.postMessage({ data: bytes, width: outWidth, height: outHeight }, [bytes.buffer]);
}

port.on("message", async (/** @type {{ windowMs?: number, close?: boolean, infer?: { data: Uint8Array, width: number, height: number } }} */ message) => {
  if (message.close) {
    await session.release();
    // Ends this thread only.
    process.exit(0);
  }
  if (message.infer) {
    await infer(message.infer);
    return;
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
