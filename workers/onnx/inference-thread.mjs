// @ts-check
/**
 * The inference thread: the only code that touches onnxruntime-node. onnxruntime-node 1.30 creates
 * and runs sessions synchronously on the calling JS thread, so running them here keeps the worker's
 * main thread (gRPC, health checks, and in the one-process setup the HTTP API) responsive while a
 * model runs for seconds. Plain JavaScript so it starts in a worker thread with no TypeScript
 * loader; it is type-checked through JSDoc (tsconfig `checkJs`).
 *
 * Protocol (one message in, one reply out, matched by `id`):
 *   {op: "create", id, session, bytes | path, options} → {id, signature}
 *   {op: "run", id, session, feeds}             → {id, outputs}   (output buffers transferred)
 *   {op: "release", id, session}                → {id}
 * A failure replies {id, error: {message}}.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { parentPort } from "node:worker_threads";
import ort from "onnxruntime-node";

if (!parentPort) throw new Error("inference-thread.mjs must run in a worker thread");
const port = parentPort;

/**
 * A full collection of this thread's heap. The heap itself stays tiny, but it holds the big external
 * buffers a session is made from (a model's bytes: 84 MB for ISNet) and fed with, which V8 would keep
 * until some later collection; freeing them right after a load or a release keeps them out of the
 * next peak (measured on ISNet: the load peaked 0.5 GB over baseline with them alive). A collection
 * of a heap this small takes about a millisecond.
 */
v8.setFlagsFromString("--expose-gc");
const collectGarbage = /** @type {() => void} */ (vm.runInNewContext("gc"));

/** @type {Map<number, ort.InferenceSession>} */
const sessions = new Map();

/** @param {readonly ort.InferenceSession.ValueMetadata[]} metadata */
function signatureOf(metadata) {
  return metadata.map((value) =>
    value.isTensor ? { name: value.name, type: value.type, shape: [...value.shape] } : { name: value.name, type: "non-tensor", shape: [] },
  );
}

/** @param {number} key */
function sessionFor(key) {
  const session = sessions.get(key);
  if (!session) throw new Error(`no session ${key} in the inference thread`);
  return session;
}

/**
 * @param {Record<string, {data: Float32Array | Int32Array | BigInt64Array, dims: number[]}>} feeds
 */
async function run(/** @type {number} */ key, feeds) {
  /** @type {Record<string, ort.Tensor>} */
  const tensors = {};
  for (const [name, tensor] of Object.entries(feeds)) {
    const type = tensor.data instanceof Int32Array ? "int32" : tensor.data instanceof BigInt64Array ? "int64" : "float32";
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
        // A path lets onnxruntime find external data files next to the graph.
        const session = await ort.InferenceSession.create(message.path ?? message.bytes, message.options);
        sessions.set(message.session, session);
        delete message.bytes;
        collectGarbage();
        port.postMessage({ id, signature: { inputs: signatureOf(session.inputMetadata), outputs: signatureOf(session.outputMetadata) } });
        break;
      }
      case "run": {
        const { outputs, transfer } = await run(message.session, message.feeds);
        port.postMessage({ id, outputs }, transfer);
        break;
      }
      case "release": {
        const session = sessions.get(message.session);
        sessions.delete(message.session);
        await session?.release();
        collectGarbage();
        port.postMessage({ id });
        break;
      }
      default:
        throw new Error(`unknown operation ${String(message.op)}`);
    }
  } catch (error) {
    port.postMessage({ id, error: { message: error instanceof Error ? error.message : String(error) } });
  }
});
