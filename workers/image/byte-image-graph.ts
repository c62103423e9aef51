/**
 * Moves an image network's pixel conversions into its own graph, at load time: the rewritten graph
 * takes 8-bit interleaved RGB (`[N, H, W, 3]` uint8) and gives 8-bit interleaved RGB back, so a tile
 * crosses to the inference thread and back as a quarter of the bytes and no JavaScript loop touches
 * its pixels. The values are exactly those of image-tensor.ts (see {@link ByteConversion}):
 *
 * - in: `Cast` to float32, then `Div` by the output factor where that gives imageToTensor's own 256
 *   values exactly (every catalog format: 0..255 tensors need the `Cast` alone, 0..1 tensors `v / 255`),
 *   else `Cast` to int32 → `Gather` from those 256 values; then `Transpose` to NCHW (segmentation
 *   networks take only this half: {@link withByteImageInput});
 * - out: `Mul` by the factor back to samples → clamp to 0..255 (`Max`, `Min`) → round halves up as
 *   `Floor(x + h)` → `Cast` to uint8 → `Transpose` to interleaved.
 *
 * Halves are rounded up by adding h = 0.5 - 2^-25 (0.49999997, the float32 just below a half) and
 * flooring. `floor(x + 0.5)` is wrong for exactly one float32 in 0..255, the one just below 0.5, whose
 * sum rounds up to 1; with h that sum is exact and floors to 0, and every other x gets the same result as
 * with 0.5: an x just below k + 1/2 stays below k + 1 (its distance from k + 1 is more than half a step
 * of the sum), an x from k + 1/2 on reaches k + 1 (within 2^-25 of it, less than half a step, or, at
 * 0.5 itself, a tie that rounds to the even 1.0). Checked once over all 1,132,396,545 float32 values
 * from 0 to 255 (none differ from rounding x + 0.5 in double; with 0.5, one does); the tests run the
 * graph on the values around every half. This replaced `f + floor(2 (x - f))`, three passes more over
 * the output. `Round` would round halves to even.
 *
 * Only ops of ONNX opset 8 and later with the same meaning in every later opset are added, so the
 * graph keeps its own opset (the nc16 styles need opset 9 for their Upsample nodes).
 */
import onnxProto, { type onnx as OnnxTypes } from "onnx-proto";
import { AtelierError } from "../../core/errors.js";
import type { ByteConversion } from "./image-tensor.js";

// onnx-proto is CommonJS; under Node ESM its exports arrive as the default import.
const { onnx } = onnxProto;

type NodeProto = OnnxTypes.INodeProto;
type ValueInfoProto = OnnxTypes.IValueInfoProto;

const PREFIX = "atelier_bytes_";
const NCHW_TO_NHWC = [0, 2, 3, 1];
const NHWC_TO_NCHW = [0, 3, 1, 2];
/** 0.5 - 2^-25, the largest float32 below one half: adding it and flooring rounds halves up, exactly. */
export const BELOW_HALF = 0.5 - 2 ** -25;

/** The runtime's key for the byte-image session of the graph whose float session is `key`: both may be loaded. */
export function byteSessionKey(key: string): string {
  return `${key}:bytes`;
}

function failure(detail: string): AtelierError {
  return new AtelierError("INTERNAL", `This image graph cannot take 8-bit pixels: ${detail}.`);
}

function node(opType: string, inputs: string[], output: string, attributes: OnnxTypes.IAttributeProto[] = []): NodeProto {
  return onnx.NodeProto.create({ name: output, opType, input: inputs, output: [output], attribute: attributes });
}

const intAttribute = (name: string, i: number) => onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INT, i });
const intsAttribute = (name: string, ints: number[]) => onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INTS, ints });

function floatConstant(name: string, values: Float32Array, dims: number[]): OnnxTypes.ITensorProto {
  const rawData = new Uint8Array(values.byteLength);
  const view = new DataView(rawData.buffer);
  // ONNX raw_data is little-endian whatever the host is.
  values.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return onnx.TensorProto.create({ name, dataType: onnx.TensorProto.DataType.FLOAT, dims, rawData });
}

/** Declares `value` (a 4-D image tensor) as uint8 and interleaved. */
function asByteImage(value: ValueInfoProto, layout: ByteConversion["layout"]): void {
  const tensorType = value.type?.tensorType;
  const dims = tensorType?.shape?.dim;
  if (!tensorType || !dims || dims.length !== 4) throw failure(`${value.name} is not a 4-D image tensor`);
  tensorType.elemType = onnx.TensorProto.DataType.UINT8;
  if (layout === "NCHW") tensorType.shape!.dim = NCHW_TO_NHWC.map((axis) => dims[axis]!);
}

function decodeGraph(bytes: Uint8Array) {
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph;
  if (!graph) throw failure("the model has no graph");
  const opset = Number((model.opsetImport ?? []).find((entry) => !entry.domain)?.version);
  if (!(opset >= 8)) throw failure(`expected ONNX opset 8 or later but found ${opset}`);
  return { model, graph };
}

const name = (step: string) => `${PREFIX}${step}`;

/**
 * Whether float32 `v / divisor` (`v` itself when the divisor is 1) is `table`'s value for every sample
 * `v`: then a `Cast` and at most a `Div` convert the input, about a seventh of the time of the `Gather`
 * lookup (3.76 M samples: 5 against 36 ms of CPU, onnxruntime-node 1.30, 2 threads). Float32 division
 * is correctly rounded, so the check on the 256 values here is the whole proof.
 */
function dividesExactly(table: Float32Array, divisor: number): boolean {
  return table.length === 256 && table.every((value, v) => value === Math.fround(v / divisor));
}

/** `input` (uint8) as float32 divided by `divisor` into `output`. */
function arithmeticInput(input: string, output: string, divisor: number): NodeProto[] {
  const cast = node("Cast", [input], divisor === 1 ? output : name("samples"), [intAttribute("to", onnx.TensorProto.DataType.FLOAT)]);
  return divisor === 1 ? [cast] : [cast, node("Div", [name("samples"), name("divisor")], output)];
}

/** `input` (uint8) looked up in the table constant into `output`. */
function lookedUpInput(input: string, output: string): NodeProto[] {
  return [
    node("Cast", [input], name("indices"), [intAttribute("to", onnx.TensorProto.DataType.INT32)]),
    node("Gather", [name("table"), name("indices")], output, [intAttribute("axis", 0)]),
  ];
}

/**
 * Makes `inputName` take `[N, H, W, 3]` uint8, converted to `table`'s value per sample (imageToTensor's
 * own values) and laid out as `layout`; the network's nodes read the float tensor under a new name.
 * Where `table` is exactly the samples divided by `divisor`, the graph computes that instead of looking up.
 */
function byteInput(graph: OnnxTypes.IGraphProto, inputName: string, table: Float32Array, layout: ByteConversion["layout"], divisor?: number): void {
  const input = (graph.input ?? []).find((value) => value.name === inputName);
  if (!input) throw failure(`it has no input "${inputName}"`);
  const floatInput = name("float_input");
  for (const existing of graph.node ?? []) existing.input = (existing.input ?? []).map((used) => (used === inputName ? floatInput : used));
  const planar = layout === "NCHW";
  const interleaved = planar ? name("interleaved_input") : floatInput;
  const arithmetic = divisor !== undefined && dividesExactly(table, divisor);
  graph.node = [
    ...(arithmetic ? arithmeticInput(inputName, interleaved, divisor) : lookedUpInput(inputName, interleaved)),
    ...(planar ? [node("Transpose", [interleaved], floatInput, [intsAttribute("perm", NHWC_TO_NCHW)])] : []),
    ...(graph.node ?? []),
  ];
  const constant = arithmetic
    ? divisor === 1 ? [] : [floatConstant(name("divisor"), Float32Array.of(divisor), [])]
    : [floatConstant(name("table"), table, [table.length])];
  graph.initializer = [...(graph.initializer ?? []), ...constant];
  asByteImage(input, layout);
  // Intermediate shapes recorded for the old name would now describe the wrong tensor.
  graph.valueInfo = (graph.valueInfo ?? []).filter((value) => value.name !== inputName);
}

/**
 * The graph `bytes` with its input `inputName` taking `[N, H, W, 3]` uint8, each sample looked up in
 * `table` (see byteInputTable in image-tensor.ts) and laid out as `layout`; its outputs are unchanged.
 * For networks whose output is no image (a segmentation matte).
 */
export function withByteImageInput(bytes: Uint8Array, table: Float32Array, layout: ByteConversion["layout"], inputName: string): Uint8Array {
  const { model, graph } = decodeGraph(bytes);
  byteInput(graph, inputName, table, layout);
  return onnx.ModelProto.encode(model).finish();
}

/**
 * The graph `bytes` with its input `inputName` taking `[N, H, W, 3]` uint8 and its output `outputName`
 * giving `[N, H', W', 3]` uint8, converted as `conversion` says; names are kept.
 */
export function withByteImageIO(bytes: Uint8Array, conversion: ByteConversion, inputName: string, outputName: string): Uint8Array {
  const { model, graph } = decodeGraph(bytes);
  const output = (graph.output ?? []).find((value) => value.name === outputName);
  if (!output) throw failure(`it has no output "${outputName}"`);
  byteInput(graph, inputName, conversion.inputTable, conversion.layout, conversion.outputFactor);

  // The network's own nodes now write the float output under a new name.
  const floatOutput = `${PREFIX}float_output`;
  for (const existing of graph.node ?? []) existing.output = (existing.output ?? []).map((made) => (made === outputName ? floatOutput : made));
  const planar = conversion.layout === "NCHW";
  const scaled = conversion.outputFactor === 1 ? floatOutput : name("scaled");
  const after: NodeProto[] = [
    ...(conversion.outputFactor === 1 ? [] : [node("Mul", [floatOutput, name("factor")], scaled)]),
    node("Max", [scaled, name("zero")], name("above_zero")),
    node("Min", [name("above_zero"), name("top")], name("clamped")),
    node("Add", [name("clamped"), name("below_half")], name("shifted")),
    node("Floor", [name("shifted")], name("rounded")),
    node("Cast", [name("rounded")], planar ? name("planar_output") : outputName, [intAttribute("to", onnx.TensorProto.DataType.UINT8)]),
    ...(planar ? [node("Transpose", [name("planar_output")], outputName, [intsAttribute("perm", NCHW_TO_NHWC)])] : []),
  ];
  graph.node = [...(graph.node ?? []), ...after];
  graph.initializer = [
    ...(graph.initializer ?? []),
    ...(conversion.outputFactor === 1 ? [] : [floatConstant(name("factor"), Float32Array.of(conversion.outputFactor), [])]),
    floatConstant(name("zero"), Float32Array.of(0), []),
    floatConstant(name("top"), Float32Array.of(255), []),
    floatConstant(name("below_half"), Float32Array.of(BELOW_HALF), []),
  ];
  asByteImage(output, conversion.layout);
  // Intermediate shapes recorded for the old name would now describe the wrong tensor.
  graph.valueInfo = (graph.valueInfo ?? []).filter((value) => value.name !== outputName);
  return onnx.ModelProto.encode(model).finish();
}
