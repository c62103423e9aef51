/**
 * The plain tensor shapes that cross the boundary of the ML runtime. Callers never see
 * onnxruntime-node's own classes, so image steps and tests stay independent of the runtime.
 */

/** A dense float32 tensor in row-major order; `data.length` is the product of `dims`. */
export interface TensorData {
  data: Float32Array;
  dims: number[];
}

/** Tensors by graph input or output name. */
export type TensorMap = Record<string, TensorData>;

/** One graph input or output as the loaded model declares it. */
export interface TensorSignature {
  name: string;
  /** Element type as onnxruntime names it (`"float32"`, `"int64"`, …). */
  type: string;
  /** Fixed sizes as numbers, dynamic ones by their symbolic name; empty when the model leaves the rank open. */
  shape: (number | string)[];
}

/** Inputs and outputs of a loaded model, in graph order. */
export interface ModelSignature {
  inputs: TensorSignature[];
  outputs: TensorSignature[];
}

/** Number of elements a tensor of `dims` holds (1 for a scalar). */
export function elementCount(dims: readonly number[]): number {
  return dims.reduce((product, size) => product * size, 1);
}

/** `[1, 3, 256, 256]`, for messages. */
export function formatShape(shape: readonly (number | string)[]): string {
  return `[${shape.join(", ")}]`;
}
