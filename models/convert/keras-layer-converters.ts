/**
 * One converter per Keras layer class: each reads the layer's config and weights and appends the
 * equivalent ONNX nodes, keeping rank-4 tensors NCHW (see keras-layout.ts).
 *
 * Besides the stock Keras layers this covers UpscalerJS's ESRGAN custom layers `MultiplyBeta` and
 * `PixelShuffle<N>x` (definitions in `@upscalerjs/esrgan-*` `dist/.../packages/shared/src/esrgan/esrgan.js`).
 */
import { emitActivation } from "./keras-activations.js";
import {
  type ConvertedTensor,
  type ShapeDim,
  NCHW_TO_NHWC,
  NHWC_TO_NCHW,
  onnxAxis,
  scaleDim,
} from "./keras-layout.js";
import { attr, type OnnxGraphBuilder } from "./onnx-graph.js";
import { permuteTensor } from "./permute-tensor.js";
import {
  type TfPadding,
  convOutputLength,
  convPaddingAttributes,
  effectiveKernel,
  transposedConvAxisPadding,
  transposedConvOutputLength,
} from "./tf-padding.js";
import type { KerasLayer, WeightTensor } from "./tfjs-layers-model.js";

/** What a layer converter gets: the graph, the layer, its input tensors and its weights. */
export interface LayerConversion {
  graph: OnnxGraphBuilder;
  layer: KerasLayer;
  inputs: ConvertedTensor[];
  /** The layer's weight `<layer name>/<suffix>` (e.g. `kernel`); throws when the model lacks it. */
  weight(suffix: string): WeightTensor;
  /** Base for the ONNX names of values this layer produces (the sanitised layer name). */
  outputBase: string;
}

/** Converts one call of a Keras layer; returns the (single) output tensor. */
export type LayerConverter = (c: LayerConversion) => ConvertedTensor;

function fail(c: LayerConversion, message: string): never {
  throw new Error(`${c.layer.className} layer "${c.layer.name}": ${message}`);
}

function onlyInput(c: LayerConversion, rank?: number): ConvertedTensor {
  if (c.inputs.length !== 1) fail(c, `expected one input, got ${c.inputs.length}`);
  const x = c.inputs[0]!;
  if (rank !== undefined && x.kerasShape.length !== rank) fail(c, `expected a rank-${rank} input, got rank ${x.kerasShape.length}`);
  return x;
}

function pair(c: LayerConversion, key: string, fallback: number): [number, number] {
  const v = c.layer.config[key];
  if (v === undefined || v === null) return [fallback, fallback];
  if (typeof v === "number") return [v, v];
  if (Array.isArray(v) && v.length === 2 && v.every((n) => typeof n === "number")) return [v[0] as number, v[1] as number];
  return fail(c, `cannot read ${key}=${JSON.stringify(v)}`);
}

function channelsLast(c: LayerConversion): void {
  const format = c.layer.config.data_format;
  if (format !== undefined && format !== null && format !== "channels_last") fail(c, `data_format ${String(format)} is not supported`);
}

function tfPadding(c: LayerConversion): TfPadding {
  const p = c.layer.config.padding ?? "valid";
  if (p !== "same" && p !== "valid") fail(c, `padding "${String(p)}" is not supported`);
  return p;
}

function useBias(c: LayerConversion): boolean {
  return c.layer.config.use_bias !== false;
}

function transpose(c: LayerConversion, input: string, perm: readonly number[], suffix: string): string {
  return c.graph.op("Transpose", [input], { perm: attr.ints(perm) }, `${c.outputBase}_${suffix}`);
}

function withActivation(c: LayerConversion, preActivation: string, rank: number): string {
  const activation = c.layer.config.activation;
  if (activation === undefined || activation === null || activation === "linear") return preActivation;
  return emitActivation(c.graph, activation, preActivation, rank, `${c.outputBase}_act`);
}

const conv2d: LayerConverter = (c) => {
  const x = onlyInput(c, 4);
  channelsLast(c);
  const kernel = c.weight("kernel"); // TF layout [kh, kw, in/groups, out]
  const [kh, kw, inPerGroup, out] = kernel.shape as [number, number, number, number];
  const strides = pair(c, "strides", 1);
  const dilations = pair(c, "dilation_rate", 1);
  const groups = typeof c.layer.config.groups === "number" ? c.layer.config.groups : 1;
  const padding = tfPadding(c);
  if ((strides[0] > 1 || strides[1] > 1) && (dilations[0] > 1 || dilations[1] > 1)) fail(c, "strides > 1 together with dilation > 1");
  const inChannels = x.kerasShape[3];
  if (typeof inChannels === "number" && inChannels !== inPerGroup * groups) {
    fail(c, `kernel expects ${inPerGroup * groups} input channels, input has ${inChannels}`);
  }
  const w = permuteTensor(kernel, [3, 2, 0, 1]); // → ONNX [out, in/groups, kh, kw]
  const inputs = [x.name, c.graph.addFloatInitializer(`${c.outputBase}_weight`, w.shape, w.data)];
  if (useBias(c)) inputs.push(c.graph.addFloatInitializer(`${c.outputBase}_bias`, [out], c.weight("bias").data));
  const y = c.graph.op(
    "Conv",
    inputs,
    {
      kernel_shape: attr.ints([kh, kw]),
      strides: attr.ints(strides),
      dilations: attr.ints(dilations),
      group: attr.int(groups),
      ...convPaddingAttributes(padding, [kh, kw], strides, dilations),
    },
    c.outputBase,
  );
  const spatial = (d: ShapeDim, axis: 0 | 1): ShapeDim => {
    if (typeof d === "number") return convOutputLength(d, padding, axis === 0 ? kh : kw, strides[axis], dilations[axis]);
    const kernelExtent = effectiveKernel(axis === 0 ? kh : kw, dilations[axis]);
    return strides[axis] === 1 && (padding === "same" || kernelExtent === 1) ? d : null;
  };
  return { name: withActivation(c, y, 4), kerasShape: [x.kerasShape[0]!, spatial(x.kerasShape[1]!, 0), spatial(x.kerasShape[2]!, 1), out] };
};

const conv2dTranspose: LayerConverter = (c) => {
  const x = onlyInput(c, 4);
  channelsLast(c);
  const kernel = c.weight("kernel"); // TF layout [kh, kw, out, in]
  const [kh, kw, out] = kernel.shape as [number, number, number, number];
  const strides = pair(c, "strides", 1);
  const dilations = pair(c, "dilation_rate", 1);
  const padding = tfPadding(c);
  const rawOutputPadding = c.layer.config.output_padding;
  const outputPaddings: [number | null, number | null] =
    rawOutputPadding === undefined || rawOutputPadding === null ? [null, null] : pair(c, "output_padding", 0);
  const axes = [0, 1].map((i) =>
    transposedConvAxisPadding(padding, i === 0 ? kh : kw, strides[i]!, dilations[i]!, outputPaddings[i]!),
  );
  const w = permuteTensor(kernel, [3, 2, 0, 1]); // → ONNX [in, out, kh, kw]
  const inputs = [x.name, c.graph.addFloatInitializer(`${c.outputBase}_weight`, w.shape, w.data)];
  if (useBias(c)) inputs.push(c.graph.addFloatInitializer(`${c.outputBase}_bias`, [out], c.weight("bias").data));
  const y = c.graph.op(
    "ConvTranspose",
    inputs,
    {
      kernel_shape: attr.ints([kh, kw]),
      strides: attr.ints(strides),
      dilations: attr.ints(dilations),
      pads: attr.ints([axes[0]!.begin, axes[1]!.begin, axes[0]!.end, axes[1]!.end]),
      output_padding: attr.ints([axes[0]!.outputPadding, axes[1]!.outputPadding]),
    },
    c.outputBase,
  );
  const spatial = (d: ShapeDim, axis: 0 | 1): ShapeDim => {
    if (typeof d === "number") {
      return transposedConvOutputLength(d, padding, axis === 0 ? kh : kw, strides[axis], dilations[axis], outputPaddings[axis]);
    }
    return padding === "same" && outputPaddings[axis] === null ? scaleDim(d, strides[axis]) : null;
  };
  return { name: withActivation(c, y, 4), kerasShape: [x.kerasShape[0]!, spatial(x.kerasShape[1]!, 0), spatial(x.kerasShape[2]!, 1), out] };
};

const dense: LayerConverter = (c) => {
  const x = onlyInput(c);
  const rank = x.kerasShape.length;
  const kernel = c.weight("kernel"); // [in, units]
  const units = kernel.shape[1]!;
  const k = c.graph.addFloatInitializer(`${c.outputBase}_kernel`, kernel.shape, kernel.data);
  const bias = useBias(c) ? c.graph.addFloatInitializer(`${c.outputBase}_bias`, [units], c.weight("bias").data) : undefined;
  let y: string;
  if (rank === 2) {
    y = c.graph.op("Gemm", bias ? [x.name, k, bias] : [x.name, k], undefined, c.outputBase);
  } else {
    // Dense acts on the last Keras axis, which for images is ONNX axis 1: go through NHWC.
    const source = rank === 4 ? transpose(c, x.name, NCHW_TO_NHWC, "nhwc") : x.name;
    let z = c.graph.op("MatMul", [source, k], undefined, `${c.outputBase}_matmul`);
    if (bias) z = c.graph.op("Add", [z, bias], undefined, `${c.outputBase}_biased`);
    y = rank === 4 ? transpose(c, z, NHWC_TO_NCHW, "nchw") : z;
  }
  return { name: withActivation(c, y, rank), kerasShape: [...x.kerasShape.slice(0, -1), units] };
};

/** Reshape/Flatten follow Keras element order (NHWC), so image tensors are transposed around them. */
function reshapeTo(c: LayerConversion, x: ConvertedTensor, target: number[]): ConvertedTensor {
  const source = x.kerasShape.length === 4 ? transpose(c, x.name, NCHW_TO_NHWC, "nhwc") : x.name;
  const shape = c.graph.addInt64Initializer(`${c.outputBase}_shape`, [target.length + 1], [0, ...target]);
  const outRank = target.length + 1;
  const reshaped = c.graph.op("Reshape", [source, shape], undefined, outRank === 4 ? `${c.outputBase}_nhwc_out` : c.outputBase);
  const name = outRank === 4 ? transpose(c, reshaped, NHWC_TO_NCHW, "nchw") : reshaped;
  // Resolve a -1 when the element count per sample is known.
  const perSample = x.kerasShape.slice(1);
  const known = perSample.every((d) => typeof d === "number") ? (perSample as number[]).reduce((a, b) => a * b, 1) : null;
  const fixed = target.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  const dims: ShapeDim[] = target.map((d) => (d !== -1 ? d : known !== null ? known / fixed : null));
  return { name, kerasShape: [x.kerasShape[0]!, ...dims] };
}

const reshape: LayerConverter = (c) => {
  const target = c.layer.config.target_shape;
  // The inferred dimension is written -1 by Keras and null by TF.js.
  if (!Array.isArray(target) || !target.every((d) => typeof d === "number" || d === null)) {
    fail(c, `cannot read target_shape ${JSON.stringify(target)}`);
  }
  return reshapeTo(c, onlyInput(c), target.map((d: number | null) => d ?? -1));
};

const flatten: LayerConverter = (c) => reshapeTo(c, onlyInput(c), [-1]);

const activation: LayerConverter = (c) => {
  const x = onlyInput(c);
  return { name: emitActivation(c.graph, c.layer.config.activation, x.name, x.kerasShape.length, c.outputBase), kerasShape: x.kerasShape };
};

const leakyRelu: LayerConverter = (c) => {
  const x = onlyInput(c);
  const alpha = c.layer.config.negative_slope ?? c.layer.config.alpha ?? 0.3;
  if (typeof alpha !== "number") fail(c, `cannot read alpha ${JSON.stringify(alpha)}`);
  return { name: c.graph.op("LeakyRelu", [x.name], { alpha: attr.float(alpha) }, c.outputBase), kerasShape: x.kerasShape };
};

const identity: LayerConverter = (c) => onlyInput(c);

/** Shape of an elementwise merge: per axis, whichever input knows the dim (Keras merges need equal shapes). */
function mergedShape(inputs: readonly ConvertedTensor[]): ShapeDim[] {
  const rank = Math.max(...inputs.map((t) => t.kerasShape.length));
  return Array.from({ length: rank }, (_, axis) => {
    for (const t of inputs) {
      const d = t.kerasShape[axis - (rank - t.kerasShape.length)];
      if (d !== undefined && d !== null && d !== 1) return d;
    }
    return inputs.some((t) => t.kerasShape[axis - (rank - t.kerasShape.length)] === 1) ? 1 : null;
  });
}

/** Elementwise merge layers; ONNX's variadic ops broadcast like Keras merges do. */
function merge(binaryOp: string, variadicOp: string): LayerConverter {
  return (c) => {
    if (c.inputs.length < 2) fail(c, "expected at least two inputs");
    const names = c.inputs.map((t) => t.name);
    const op = names.length === 2 ? binaryOp : variadicOp;
    return { name: c.graph.op(op, names, undefined, c.outputBase), kerasShape: mergedShape(c.inputs) };
  };
}

/** ONNX Mul is binary, so more than two factors are chained. */
const multiply: LayerConverter = (c) => {
  if (c.inputs.length < 2) fail(c, "expected at least two inputs");
  let product = c.inputs[0]!.name;
  c.inputs.slice(1).forEach((t, i) => {
    product = c.graph.op("Mul", [product, t.name], undefined, i === c.inputs.length - 2 ? c.outputBase : `${c.outputBase}_partial`);
  });
  return { name: product, kerasShape: mergedShape(c.inputs) };
};

const subtract: LayerConverter = (c) => {
  if (c.inputs.length !== 2) fail(c, "expected exactly two inputs");
  return { name: c.graph.op("Sub", [c.inputs[0]!.name, c.inputs[1]!.name], undefined, c.outputBase), kerasShape: mergedShape(c.inputs) };
};

const concatenate: LayerConverter = (c) => {
  if (c.inputs.length < 1) fail(c, "expected inputs");
  const rank = c.inputs[0]!.kerasShape.length;
  const rawAxis = c.layer.config.axis ?? -1;
  if (typeof rawAxis !== "number") fail(c, `cannot read axis ${JSON.stringify(rawAxis)}`);
  const kerasAxis = rawAxis < 0 ? rawAxis + rank : rawAxis;
  const name = c.graph.op("Concat", c.inputs.map((t) => t.name), { axis: attr.int(onnxAxis(kerasAxis, rank)) }, c.outputBase);
  const kerasShape = [...c.inputs[0]!.kerasShape];
  const along = c.inputs.map((t) => t.kerasShape[kerasAxis]);
  kerasShape[kerasAxis] = along.every((d) => typeof d === "number") ? (along as number[]).reduce((a, b) => a + b, 0) : null;
  return { name, kerasShape };
};

const upSampling2d: LayerConverter = (c) => {
  const x = onlyInput(c, 4);
  channelsLast(c);
  const interpolation = c.layer.config.interpolation ?? "nearest";
  // Only nearest is verified against TF here; bilinear's pixel-centre convention differs between
  // Keras versions, so it is refused rather than guessed.
  if (interpolation !== "nearest") fail(c, `interpolation "${String(interpolation)}" is not supported`);
  const [sh, sw] = pair(c, "size", 2);
  const scales = c.graph.addFloatInitializer(`${c.outputBase}_scales`, [4], Float32Array.of(1, 1, sh, sw));
  const name = c.graph.op(
    "Resize",
    [x.name, "", scales],
    {
      mode: attr.string("nearest"),
      // Keras nearest upsampling repeats pixels: source index = floor(dest / scale).
      coordinate_transformation_mode: attr.string("asymmetric"),
      nearest_mode: attr.string("floor"),
    },
    c.outputBase,
  );
  const [n, h, w, ch] = x.kerasShape as [ShapeDim, ShapeDim, ShapeDim, ShapeDim];
  return { name, kerasShape: [n, scaleDim(h, sh), scaleDim(w, sw), ch] };
};

/** UpscalerJS `MultiplyBeta`: `x * beta` (beta 0.2, the residual scaling of ESRGAN's RRDB). */
const multiplyBeta: LayerConverter = (c) => {
  const x = onlyInput(c);
  const beta = c.layer.config.beta ?? 0.2;
  if (typeof beta !== "number") fail(c, `cannot read beta ${JSON.stringify(beta)}`);
  const scalar = c.graph.addScalar(`${c.outputBase}_beta`, beta);
  return { name: c.graph.op("Mul", [x.name, scalar], undefined, c.outputBase), kerasShape: x.kerasShape };
};

/**
 * UpscalerJS `PixelShuffle<N>x`: `tf.depthToSpace(x, N, "NHWC")`. TF's channel order
 * (`(i*N + j)*C + c` feeds output pixel offset `(i, j)`) is ONNX DepthToSpace mode DCR; CRD would
 * interleave the colour channels instead (checked numerically in test/convert/keras-esrgan.test.ts).
 */
const pixelShuffle: LayerConverter = (c) => {
  const x = onlyInput(c, 4);
  const fromName = /^PixelShuffle(\d+)x$/.exec(c.layer.className)?.[1];
  const scale = c.layer.config.scale ?? (fromName ? Number(fromName) : undefined);
  if (typeof scale !== "number" || !Number.isInteger(scale) || scale < 1) fail(c, "cannot determine the block size");
  const channels = x.kerasShape[3];
  if (typeof channels === "number" && channels % (scale * scale) !== 0) fail(c, `${channels} channels are not divisible by ${scale}²`);
  const name = c.graph.op("DepthToSpace", [x.name], { blocksize: attr.int(scale), mode: attr.string("DCR") }, c.outputBase);
  const [n, h, w] = x.kerasShape as [ShapeDim, ShapeDim, ShapeDim];
  return {
    name,
    kerasShape: [n, scaleDim(h, scale), scaleDim(w, scale), typeof channels === "number" ? channels / (scale * scale) : null],
  };
};

/** Converters by Keras class name. `InputLayer` is handled by the model walker. */
export const BUILTIN_LAYER_CONVERTERS: Readonly<Record<string, LayerConverter>> = {
  Conv2D: conv2d,
  Convolution2D: conv2d,
  Conv2DTranspose: conv2dTranspose,
  Dense: dense,
  Reshape: reshape,
  Flatten: flatten,
  Activation: activation,
  LeakyReLU: leakyRelu,
  Dropout: identity,
  SpatialDropout2D: identity,
  Add: merge("Add", "Sum"),
  Multiply: multiply,
  Average: merge("Mean", "Mean"),
  Maximum: merge("Max", "Max"),
  Minimum: merge("Min", "Min"),
  Subtract: subtract,
  Concatenate: concatenate,
  UpSampling2D: upSampling2d,
  MultiplyBeta: multiplyBeta,
};

/** The converter for a Keras class name (custom ones first), or undefined when none applies. */
export function findLayerConverter(className: string, custom: Readonly<Record<string, LayerConverter>> = {}): LayerConverter | undefined {
  if (custom[className]) return custom[className];
  if (BUILTIN_LAYER_CONVERTERS[className]) return BUILTIN_LAYER_CONVERTERS[className];
  if (/^PixelShuffle\d+x$/.test(className)) return pixelShuffle;
  return undefined;
}
