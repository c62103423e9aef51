/**
 * How Keras (channels_last) tensors are laid out in the converted ONNX graph, and the shape
 * bookkeeping that lets the converter declare output dims and resolve Reshape targets.
 *
 * Rule: rank-4 tensors (images) are stored NCHW in ONNX, because onnxruntime's CPU convolutions and
 * the rest of this service work in NCHW; every other rank is stored exactly as Keras has it.
 * Shapes are always tracked in Keras order (NHWC) so layer configs can be read literally.
 */
import type { Dim } from "./onnx-graph.js";

/**
 * One dimension as far as it is known while converting: a number, a symbolic input dimension times
 * an integer factor (`height` upsampled ×2 is `{symbol: "height", factor: 2}`), or `null` (unknown).
 */
export type ShapeDim = number | { symbol: string; factor: number } | null;

/** A Keras tensor inside the ONNX graph under construction. */
export interface ConvertedTensor {
  /** The ONNX value name. */
  name: string;
  /** The Keras shape (batch first, channels last); rank-4 values are NCHW in ONNX. */
  kerasShape: ShapeDim[];
}

/** Keras (NHWC) axis → ONNX axis for a tensor of this rank; negative axes count from the end. */
export function onnxAxis(kerasAxis: number, rank: number): number {
  const axis = kerasAxis < 0 ? kerasAxis + rank : kerasAxis;
  if (axis < 0 || axis >= rank) throw new Error(`axis ${kerasAxis} is out of range for rank ${rank}`);
  if (rank !== 4) return axis;
  return [0, 2, 3, 1][axis]!;
}

/** Permutation that turns NCHW into NHWC (for layers that need Keras element order). */
export const NCHW_TO_NHWC = [0, 2, 3, 1] as const;
/** Permutation that turns NHWC into NCHW. */
export const NHWC_TO_NCHW = [0, 3, 1, 2] as const;

/** A dimension multiplied by an integer factor, staying symbolic when it was. */
export function scaleDim(d: ShapeDim, factor: number): ShapeDim {
  if (d === null) return null;
  if (typeof d === "number") return d * factor;
  return { symbol: d.symbol, factor: d.factor * factor };
}

/** The dim as declared in the ONNX model: numbers stay numbers, `height` ×2 becomes `"height*2"`. */
export function declaredDim(d: ShapeDim): Dim {
  if (d === null || typeof d === "number") return d;
  return d.factor === 1 ? d.symbol : `${d.symbol}*${d.factor}`;
}

/** The ONNX-side dims of a Keras shape (NHWC → NCHW for rank 4). */
export function declaredDims(kerasShape: readonly ShapeDim[]): Dim[] {
  const onnxOrder = kerasShape.length === 4 ? NHWC_TO_NCHW.map((i) => kerasShape[i]!) : [...kerasShape];
  return onnxOrder.map(declaredDim);
}
