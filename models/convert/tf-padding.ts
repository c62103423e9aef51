/**
 * TensorFlow's "SAME"/"VALID" padding expressed as ONNX Conv / ConvTranspose attributes.
 *
 * TF puts the odd pixel of SAME padding at the end (bottom/right), which ONNX calls SAME_UPPER. With
 * stride 1 the padding does not depend on the input size, so explicit `pads` are used (exact, and
 * shape inference stays static); with larger strides it does, so `auto_pad = SAME_UPPER` lets the
 * runtime compute it per input.
 */
import { attr, type OnnxAttribute } from "./onnx-graph.js";

/** TF padding mode names as written in Keras configs. */
export type TfPadding = "same" | "valid";

/** Kernel extent once dilation spreads its taps. */
export function effectiveKernel(kernel: number, dilation: number): number {
  return (kernel - 1) * dilation + 1;
}

/**
 * Attributes `pads` or `auto_pad` for an ONNX Conv that reproduces `tf.nn.conv2d(padding)` on the
 * two spatial axes.
 */
export function convPaddingAttributes(
  padding: TfPadding,
  kernel: readonly [number, number],
  strides: readonly [number, number],
  dilations: readonly [number, number],
): Record<string, OnnxAttribute> {
  if (padding === "valid") return { pads: attr.ints([0, 0, 0, 0]) };
  if (strides[0] === 1 && strides[1] === 1) {
    const total = [0, 1].map((i) => effectiveKernel(kernel[i]!, dilations[i]!) - 1);
    const begin = total.map((t) => Math.floor(t / 2));
    const end = total.map((t, i) => t - begin[i]!);
    return { pads: attr.ints([begin[0]!, begin[1]!, end[0]!, end[1]!]) };
  }
  return { auto_pad: attr.string("SAME_UPPER") };
}

/** ONNX ConvTranspose `pads` and `output_padding` for one spatial axis. */
export interface TransposedAxisPadding {
  begin: number;
  end: number;
  outputPadding: number;
}

/**
 * Padding for an ONNX ConvTranspose that reproduces Keras `Conv2DTranspose` on one axis.
 *
 * Keras asks `tf.nn.conv2d_transpose` for an output length of `in*s` (same) or
 * `in*s + max(k-s, 0)` (valid), or the `output_padding` variants; TF then crops the full transposed
 * result (length `(in-1)*s + k`) by the forward-conv SAME padding, odd pixel at the end. The crop is
 * independent of `in`, so fixed pads suffice; when the requested length exceeds the full result
 * (kernel smaller than stride) the shortfall becomes `output_padding` (bias-only cells, as in TF).
 */
export function transposedConvAxisPadding(
  padding: TfPadding,
  kernel: number,
  stride: number,
  dilation: number,
  kerasOutputPadding: number | null,
): TransposedAxisPadding {
  // overhang = full transposed length - requested length; it does not depend on the input length,
  // so evaluating it at input length 1 gives it for every length.
  const overhang = effectiveKernel(kernel, dilation) - transposedConvOutputLength(1, padding, kernel, stride, dilation, kerasOutputPadding);
  const begin = padding === "same" ? Math.floor(Math.max(overhang, 0) / 2) : 0;
  const end = overhang - begin;
  return end >= 0 ? { begin, end, outputPadding: 0 } : { begin, end: 0, outputPadding: -end };
}

/** Output length of Keras `Conv2DTranspose` on one axis, for shape bookkeeping. */
export function transposedConvOutputLength(
  input: number,
  padding: TfPadding,
  kernel: number,
  stride: number,
  dilation: number,
  kerasOutputPadding: number | null,
): number {
  const k = effectiveKernel(kernel, dilation);
  if (kerasOutputPadding === null) return padding === "same" ? input * stride : input * stride + Math.max(k - stride, 0);
  return padding === "same"
    ? (input - 1) * stride + k - 2 * Math.floor(k / 2) + kerasOutputPadding
    : (input - 1) * stride + k + kerasOutputPadding;
}

/** Output length of a TF conv on one axis. */
export function convOutputLength(input: number, padding: TfPadding, kernel: number, stride: number, dilation: number): number {
  return padding === "same"
    ? Math.ceil(input / stride)
    : Math.floor((input - effectiveKernel(kernel, dilation)) / stride) + 1;
}
