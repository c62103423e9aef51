/**
 * Makes the fixed-size nc16 fast-neural-style graphs (exported for ONNX.js at 1x3x256x256) run at any
 * size, at load time, without touching the installed file.
 *
 * The networks are fully convolutional; only two things pin them to 256x256:
 * - the declared input and output dims, which become symbolic (`H`, `W`);
 * - each 2x nearest-neighbour upsampling, which the ONNX.js exporter wrote as shape arithmetic:
 *   `Reshape [-1, 1] → Concat(x, x) → Reshape [-1, 2W] → Concat(x, x) → Reshape [-1, C, 2H, 2W]`, with
 *   the 256x256 sizes baked into the last two shapes. Each such chain is replaced by one `Upsample`
 *   (nearest, scales 1, 1, 2, 2), which computes exactly the same values at every size.
 *
 * The instance norms (`Reshape [1, C, 1, -1]` then `ReduceMean`) already work at any size for a batch
 * of one. Anything else that looks size-dependent makes the rewrite fail loudly rather than produce a
 * graph that silently gives wrong pictures.
 */
import onnxProto, { type onnx as OnnxTypes } from "onnx-proto";
import { AtelierError } from "../../core/errors.js";

// onnx-proto is CommonJS; under Node ESM its exports arrive as the default import.
const { onnx } = onnxProto;

// Decoded messages are typed by protobufjs as interfaces whose repeated fields may be null.
type NodeProto = OnnxTypes.INodeProto;
type TensorProto = OnnxTypes.ITensorProto;
type GraphProto = OnnxTypes.IGraphProto;

const inputsOf = (node: NodeProto): string[] => node.input ?? [];
const outputsOf = (node: NodeProto): string[] => node.output ?? [];
const nodesOf = (graph: GraphProto): NodeProto[] => graph.node ?? [];

/** What the rewrite did, for logs and tests. */
export interface DynamicGraphReport {
  /** Upsampling chains replaced by one Upsample node each. */
  upsamplesReplaced: number;
}

function int64Values(tensor: TensorProto): number[] | undefined {
  if (tensor.dataType !== onnx.TensorProto.DataType.INT64) return undefined;
  if (tensor.int64Data && tensor.int64Data.length > 0) return tensor.int64Data.map((value) => Number(value));
  const raw = tensor.rawData;
  if (!raw || raw.byteLength % 8 !== 0) return undefined;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const values: number[] = [];
  for (let offset = 0; offset < raw.byteLength; offset += 8) values.push(Number(view.getBigInt64(offset, true)));
  return values;
}

/** Constant int64 tensors by name: `Constant` node outputs and initializers. */
function int64Constants(graph: GraphProto): Map<string, number[]> {
  const constants = new Map<string, number[]>();
  for (const tensor of graph.initializer ?? []) {
    const values = int64Values(tensor);
    if (values && tensor.name) constants.set(tensor.name, values);
  }
  for (const node of nodesOf(graph)) {
    const value = node.attribute?.[0];
    if (node.opType !== "Constant" || value?.name !== "value" || !value.t) continue;
    const values = int64Values(value.t);
    if (values) constants.set(outputsOf(node)[0]!, values);
  }
  return constants;
}

const sameValues = (a: readonly number[] | undefined, b: readonly number[]) => a !== undefined && a.length === b.length && a.every((v, i) => v === b[i]);

function failure(detail: string): AtelierError {
  return new AtelierError("INTERNAL", `This style graph cannot be made size-independent: ${detail}.`);
}

/**
 * Returns the graph's bytes with symbolic spatial dims and exact `Upsample` nodes in place of the
 * fixed-size upsampling chains. Throws INTERNAL when the graph does not have the expected shape.
 */
export function makeStyleGraphSizeIndependent(bytes: Uint8Array): { bytes: Uint8Array; report: DynamicGraphReport } {
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph;
  if (!graph) throw failure("the model has no graph");
  const opset = (model.opsetImport ?? []).find((entry) => !entry.domain)?.version;
  // Upsample with a scales input is the opset 9 form; later opsets replaced it with Resize.
  if (Number(opset) !== 9) throw failure(`expected ONNX opset 9 but found ${String(opset)}`);

  const constants = int64Constants(graph);
  const consumers = new Map<string, NodeProto[]>();
  for (const node of nodesOf(graph)) {
    // A node reading one tensor twice (Concat(x, x)) counts once.
    for (const input of new Set(inputsOf(node))) consumers.set(input, [...(consumers.get(input) ?? []), node]);
  }
  const onlyConsumer = (name: string, opType: string): NodeProto | undefined => {
    const users = consumers.get(name) ?? [];
    return users.length === 1 && users[0]!.opType === opType ? users[0] : undefined;
  };
  const duplicatingConcat = (node: NodeProto | undefined, from: string) =>
    node !== undefined &&
    inputsOf(node).length === 2 &&
    inputsOf(node).every((input) => input === from) &&
    (node.attribute ?? []).some((a) => a.name === "axis" && Number(a.i) === 1);

  const removed = new Set<NodeProto>();
  const replacements = new Map<NodeProto, NodeProto>();
  const scalesName = "atelier_upsample_scales_2x";
  for (const node of nodesOf(graph)) {
    const [source, shape] = inputsOf(node);
    const [columns] = outputsOf(node);
    if (node.opType !== "Reshape" || !source || !columns || !sameValues(constants.get(shape ?? ""), [-1, 1])) continue;
    const concatColumns = onlyConsumer(columns, "Concat");
    if (!concatColumns || !duplicatingConcat(concatColumns, columns)) throw failure(`Reshape ${columns} to [-1, 1] is not followed by a duplicating Concat`);
    const rows = onlyConsumer(outputsOf(concatColumns)[0] ?? "", "Reshape");
    const rowShape = rows && constants.get(inputsOf(rows)[1] ?? "");
    if (!rows || rowShape?.length !== 2 || rowShape[0] !== -1) throw failure(`the column duplication after ${columns} is not reshaped into rows`);
    const rowsOut = outputsOf(rows)[0] ?? "";
    const concatRows = onlyConsumer(rowsOut, "Concat");
    if (!concatRows || !duplicatingConcat(concatRows, rowsOut)) throw failure(`the rows after ${columns} are not duplicated by a Concat`);
    const back = onlyConsumer(outputsOf(concatRows)[0] ?? "", "Reshape");
    const backShape = back && constants.get(inputsOf(back)[1] ?? "");
    const upsampled = back && outputsOf(back)[0];
    if (!back || !upsampled || backShape?.length !== 4 || backShape[0] !== -1 || backShape[3] !== rowShape[1]) {
      throw failure(`the upsampling after ${columns} does not end in a Reshape to [-1, C, 2H, 2W]`);
    }
    for (const part of [node, concatColumns, rows, concatRows]) removed.add(part);
    replacements.set(
      back,
      onnx.NodeProto.create({
        name: `atelier_upsample_${replacements.size + 1}`,
        opType: "Upsample",
        input: [source, scalesName],
        output: [upsampled],
        attribute: [onnx.AttributeProto.create({ name: "mode", type: onnx.AttributeProto.AttributeType.STRING, s: new TextEncoder().encode("nearest") })],
      }),
    );
  }

  // Any other Reshape must keep the size open (one -1 and no baked spatial size besides 1).
  for (const node of nodesOf(graph)) {
    if (node.opType !== "Reshape" || removed.has(node) || replacements.has(node)) continue;
    const shape = constants.get(inputsOf(node)[1] ?? "");
    const isWeightReshape = shape !== undefined && shape[0] === -1 && shape.slice(2).every((v) => v === 1);
    const isInstanceNorm = shape !== undefined && shape.length === 4 && shape[0] === 1 && shape[2] === 1 && shape[3] === -1;
    if (!isWeightReshape && !isInstanceNorm) throw failure(`Reshape ${outputsOf(node)[0]} has the fixed shape [${shape?.join(", ") ?? "computed"}]`);
  }

  const kept = nodesOf(graph).filter((node) => !removed.has(node)).map((node) => replacements.get(node) ?? node);
  // Shape constants that only fed the removed chains.
  const used = new Set(kept.flatMap(inputsOf));
  graph.node = kept.filter((node) => node.opType !== "Constant" || outputsOf(node).some((output) => used.has(output)));
  if (replacements.size > 0) {
    graph.initializer = [
      ...(graph.initializer ?? []),
      onnx.TensorProto.create({ name: scalesName, dataType: onnx.TensorProto.DataType.FLOAT, dims: [4], floatData: [1, 1, 2, 2] }),
    ];
  }

  for (const value of [...(graph.input ?? []).slice(0, 1), ...(graph.output ?? [])]) {
    const dims = value.type?.tensorType?.shape?.dim;
    if (!dims || dims.length !== 4) throw failure(`${value.name} is not a 4-D image tensor`);
    dims[2] = onnx.TensorShapeProto.Dimension.create({ dimParam: "H" });
    dims[3] = onnx.TensorShapeProto.Dimension.create({ dimParam: "W" });
  }
  // Stale intermediate shapes would contradict the new ones.
  graph.valueInfo = [];
  return { bytes: onnx.ModelProto.encode(model).finish(), report: { upsamplesReplaced: replacements.size } };
}
