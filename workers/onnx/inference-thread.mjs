// @ts-check
/**
 * The inference thread: the only code that touches onnxruntime-node. onnxruntime-node 1.30 creates
 * and runs sessions synchronously on the calling JS thread, so running them here keeps the worker's
 * main thread (gRPC, health checks, and in the one-process setup the HTTP API) responsive while a
 * model runs for seconds. Plain JavaScript so it starts in a worker thread with no TypeScript
 * loader; it is type-checked through JSDoc (tsconfig `checkJs`).
 *
 * Protocol (one message in, one reply out, matched by `id`):
 *   {op: "create", id, session, bytes | path, options} → {id, signature, memory}
 *   {op: "run", id, session, feeds}             → {id, outputs, memory}   (output buffers transferred)
 *   {op: "release", id, session}                → {id, memory}
 * A failure replies {id, error: {message}}. `memory` is what the process's resident memory did during
 * the operation, in bytes: {before, peak, after, processPeak} (process-memory.mjs), so the runtime
 * learns each model's real cost; loads and runs are measured here because this thread does them one
 * at a time, so a change in resident memory during one is that operation's.
 */
import { parentPort } from "node:worker_threads";
import ort from "onnxruntime-node";
import { collectGarbage, peakSinceReset, processPeakBytes, residentBytes, resetPeak } from "./process-memory.mjs";

if (!parentPort) throw new Error("inference-thread.mjs must run in a worker thread");
const port = parentPort;


/** @type {Map<number, ort.InferenceSession>} */
const sessions = new Map();

/** @param {readonly ort.InferenceSession.ValueMetadata[]} metadata */
function signatureOf(metadata) {
  return metadata.map((value) =>
    value.isTensor ? { name: value.name, type: value.type, shape: [...value.shape] } : { name: value.name, type: "non-tensor", shape: [] },
  );
}

/**
 * Runs `operation` and reports the process's resident memory before, at the peak during, and after
 * it. `before` does not count `excluded` bytes the operation frees (a model's bytes, once the session
 * is made from them).
 * @template T
 * @param {() => Promise<T>} operation
 * @returns {Promise<{result: T, memory: {before: number, peak: number, after: number, processPeak: number}}>}
 */
async function measured(operation, excluded = 0) {
  const before = residentBytes() - excluded;
  resetPeak();
  const result = await operation();
  const peak = Math.max(peakSinceReset(), before);
  return { result, memory: { before, peak, after: residentBytes(), processPeak: processPeakBytes() } };
}

/** @param {number} key */
function sessionFor(key) {
  const session = sessions.get(key);
  if (!session) throw new Error(`no session ${key} in the inference thread`);
  return session;
}

/**
 * @param {Record<string, {data: Float32Array | Int32Array | BigInt64Array | Uint8Array, dims: number[]}>} feeds
 */
async function run(/** @type {number} */ key, feeds) {
  /** @type {Record<string, ort.Tensor>} */
  const tensors = {};
  for (const [name, tensor] of Object.entries(feeds)) {
    const type =
      tensor.data instanceof Uint8Array ? "uint8" : tensor.data instanceof Int32Array ? "int32" : tensor.data instanceof BigInt64Array ? "int64" : "float32";
    tensors[name] = new ort.Tensor(type, tensor.data, tensor.dims);
  }
  const results = await sessionFor(key).run(tensors);
  /** @type {Record<string, {data: unknown, dims: number[]}>} */
  const outputs = {};
  /** @type {ArrayBuffer[]} */
  const transfer = [];
  for (const [name, value] of Object.entries(results)) {
    let data = value.data;
    if (ArrayBuffer.isView(data)) {
      // Only a typed array that owns its whole buffer can be transferred without copying.
      if (data.byteOffset !== 0 || data.byteLength !== data.buffer.byteLength) data = data.slice();
      transfer.push(/** @type {ArrayBuffer} */ (data.buffer));
    }
    outputs[name] = { data, dims: [...value.dims] };
  }
  return { outputs, transfer };
}

port.on("message", async (/** @type {any} */ message) => {
  const { id } = message;
  try {
    switch (message.op) {
      case "create": {
        collectGarbage();
        const { result: session, memory } = await measured(async () => {
          // A path lets onnxruntime find external data files next to the graph.
          const created = await ort.InferenceSession.create(message.path ?? message.bytes, message.options);
          delete message.bytes;
          collectGarbage();
          return created;
        }, message.bytes?.byteLength ?? 0);
        sessions.set(message.session, session);
        port.postMessage({ id, memory, signature: { inputs: signatureOf(session.inputMetadata), outputs: signatureOf(session.outputMetadata) } });
        break;
      }
      case "run": {
        const { result, memory } = await measured(() => run(message.session, message.feeds));
        port.postMessage({ id, outputs: result.outputs, memory }, result.transfer);
        break;
      }
      case "release": {
        const session = sessions.get(message.session);
        sessions.delete(message.session);
        const { memory } = await measured(async () => {
          await session?.release();
          collectGarbage();
        });
        port.postMessage({ id, memory });
        break;
      }
      default:
        throw new Error(`unknown operation ${String(message.op)}`);
    }
  } catch (error) {
    port.postMessage({ id, error: { message: error instanceof Error ? error.message : String(error) } });
  }
});
