/** Runs converted ONNX bytes with onnxruntime-node (CPU), the runtime the service uses. */
import * as ort from "onnxruntime-node";

/** A float32 tensor for or from ONNX Runtime. */
export interface OnnxValues {
  data: Float32Array;
  dims: number[];
}

/** Loads a model from bytes (a converted graph or a file read from the mirror). */
export function onnxSession(bytes: Uint8Array): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(bytes);
}

/** Runs the session on float32 feeds and returns every output as float32. */
export async function runOnnx(session: ort.InferenceSession, feeds: Record<string, OnnxValues>): Promise<Record<string, OnnxValues>> {
  const tensors = Object.fromEntries(Object.entries(feeds).map(([name, v]) => [name, new ort.Tensor("float32", v.data, v.dims)]));
  const results = await session.run(tensors);
  return Object.fromEntries(
    Object.entries(results).map(([name, t]) => [name, { data: t.data as Float32Array, dims: [...t.dims] }]),
  );
}

/** Convenience for single-output models. */
export async function runOnnxOutput(session: ort.InferenceSession, feeds: Record<string, OnnxValues>, output: string): Promise<OnnxValues> {
  const results = await runOnnx(session, feeds);
  const value = results[output];
  if (!value) throw new Error(`model has no output "${output}" (outputs: ${Object.keys(results).join(", ")})`);
  return value;
}
