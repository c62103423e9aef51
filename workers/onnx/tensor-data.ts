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

/** A dense uint8 tensor in row-major order: 8-bit pixels in and out of graphs that convert them themselves. */
export interface ByteTensor {
  data: Uint8Array;
  dims: number[];
}

/** uint8 tensors by graph output name. */
export type ByteTensorMap = Record<string, ByteTensor>;

/** Element types a feed may have: float32, the integer types of token ids and timesteps, and uint8 pixels. */
export const FEED_ELEMENT_TYPES = ["float32", "int32", "int64", "uint8"] as const;
export type FeedElementType = (typeof FEED_ELEMENT_TYPES)[number];

/** A graph input: float32 as TensorData, int32 / int64 values in an Int32Array / BigInt64Array, or uint8 pixels. */
export interface FeedData {
  data: Float32Array | Int32Array | BigInt64Array | Uint8Array;
  dims: number[];
}

/** Feeds by graph input name; every TensorMap is one. Outputs stay float32 (TensorMap). */
export type FeedMap = Record<string, FeedData>;

/** The element type of a feed, from its typed array. */
export function feedElementType(feed: FeedData): FeedElementType {
  if (feed.data instanceof Uint8Array) return "uint8";
  return feed.data instanceof Int32Array ? "int32" : feed.data instanceof BigInt64Array ? "int64" : "float32";
}

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
