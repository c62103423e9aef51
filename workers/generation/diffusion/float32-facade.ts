/**
 * Gives an ONNX graph a float32 face where the runtime cannot feed or return its element types.
 * workers/onnx feeds float32, int32 and int64 and returns float32, so (with `fed` set to those) each
 * graph input of another type (float16 inputs of half-precision exports) becomes a float32 input
 * followed by a `Cast` to the type the graph was built for, and each non-float32 output gets a `Cast`
 * to float32. With the default `fed` (float32 alone) integer inputs get the face too (`input_ids`,
 * `timestep`): the values are unchanged where float32 holds them exactly (token ids < 2^24, timesteps
 * 0..999), and Cast from float to integer truncates toward zero, as numpy's `astype` does in the
 * reference pipelines.
 *
 * A graph whose weights live in external data files (a full-precision SD UNet) cannot be rewritten
 * from its bytes: the model loader hands it to the runtime by path instead, without a facade.
 */
import onnxProto from "onnx-proto";
import { AtelierError } from "../../../core/errors.js";

const { onnx } = onnxProto;
type GraphProto = InstanceType<typeof onnx.GraphProto>;
type NodeProto = InstanceType<typeof onnx.NodeProto>;
type ValueInfoProto = InstanceType<typeof onnx.ValueInfoProto>;

const DataType = onnx.TensorProto.DataType;

/** onnxruntime's element type names for the ONNX type codes a diffusion export uses. */
export const ELEMENT_TYPE_NAMES: Readonly<Record<number, string>> = {
  [DataType.FLOAT]: "float32",
  [DataType.FLOAT16]: "float16",
  [DataType.DOUBLE]: "float64",
  [DataType.INT32]: "int32",
  [DataType.INT64]: "int64",
  [DataType.UINT8]: "uint8",
  [DataType.INT8]: "int8",
  [DataType.BOOL]: "bool",
};

/** A graph input or output as declared in the file. */
export interface DeclaredValue {
  name: string;
  /** onnxruntime's element type name (`"int32"`, …), or `"type N"` for others. */
  type: string;
  shape: (number | string)[];
}

export interface FacadeResult {
  /** The model to load: the original bytes when nothing needed a facade. */
  bytes: Uint8Array;
  /** Inputs and outputs as the original graph declares them. */
  declared: { inputs: DeclaredValue[]; outputs: DeclaredValue[] };
  /** Names given a float32 face. */
  cast: string[];
}

function typeName(code: number): string {
  return ELEMENT_TYPE_NAMES[code] ?? `type ${code}`;
}

function elementTypeOf(value: ValueInfoProto): number {
  return value.type?.tensorType?.elemType ?? DataType.UNDEFINED;
}

function describe(value: ValueInfoProto): DeclaredValue {
  const dims = value.type?.tensorType?.shape?.dim ?? [];
  return {
    name: value.name,
    type: typeName(elementTypeOf(value)),
    shape: dims.map((dim) => (dim.dimParam ? dim.dimParam : dim.dimValue !== undefined && dim.dimValue !== null ? Number(dim.dimValue) : "")),
  };
}

function setElementType(value: ValueInfoProto, code: number): void {
  value.type!.tensorType!.elemType = code;
}

/** Renames every use of `from` as a node input, in this graph and its subgraphs. */
function renameUses(graph: GraphProto, from: string, to: string): void {
  for (const node of graph.node as NodeProto[]) {
    node.input = node.input.map((name) => (name === from ? to : name));
    for (const attribute of node.attribute) {
      if (attribute.g) renameUses(attribute.g as GraphProto, from, to);
      for (const sub of attribute.graphs ?? []) renameUses(sub as GraphProto, from, to);
    }
  }
}

function castNode(input: string, output: string, to: number): NodeProto {
  return onnx.NodeProto.create({
    name: `atelier_facade_cast_${output}`,
    opType: "Cast",
    input: [input],
    output: [output],
    attribute: [onnx.AttributeProto.create({ name: "to", type: onnx.AttributeProto.AttributeType.INT, i: to })],
  });
}

/** The declared inputs and outputs of an ONNX model. */
export function declaredValues(bytes: Uint8Array): { inputs: DeclaredValue[]; outputs: DeclaredValue[] } {
  const graph = onnx.ModelProto.decode(bytes).graph as GraphProto | null | undefined;
  if (!graph) throw new Error("The ONNX model has no graph");
  const initializers = new Set(graph.initializer.map((tensor) => tensor.name));
  return {
    inputs: (graph.input as ValueInfoProto[]).filter((input) => !initializers.has(input.name)).map(describe),
    outputs: (graph.output as ValueInfoProto[]).map(describe),
  };
}

/**
 * `bytes` with every input and output whose element type is not in `fed` (onnxruntime names;
 * float32 is always fed) turned float32 at the graph boundary. Throws when the model keeps its
 * weights in external data files.
 */
export function float32Facade(bytes: Uint8Array, fed: readonly string[] = ["float32"]): FacadeResult {
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph as GraphProto | null | undefined;
  if (!graph) throw new Error("The ONNX model has no graph");
  if (graph.initializer.some((tensor) => tensor.dataLocation === onnx.TensorProto.DataLocation.EXTERNAL)) {
    throw new AtelierError(
      "INTERNAL",
      "This ONNX graph keeps its weights in external data files: it must be loaded by path (a catalog `GraphSource` with `externalData`), not rewritten from its bytes.",
    );
  }
  const initializers = new Set(graph.initializer.map((tensor) => tensor.name));
  const inputs = (graph.input as ValueInfoProto[]).filter((input) => !initializers.has(input.name));
  const outputs = graph.output as ValueInfoProto[];
  const declared = { inputs: inputs.map(describe), outputs: outputs.map(describe) };
  const accepted = new Set(["float32", ...fed]);
  const cast: string[] = [];
  const prepended: NodeProto[] = [];
  const appended: NodeProto[] = [];

  for (const input of inputs) {
    const code = elementTypeOf(input);
    if (accepted.has(typeName(code))) continue;
    const inner = `${input.name}__atelier_typed`;
    renameUses(graph, input.name, inner);
    for (const info of graph.valueInfo as ValueInfoProto[]) if (info.name === input.name) info.name = inner;
    prepended.push(castNode(input.name, inner, code));
    setElementType(input, DataType.FLOAT);
    cast.push(input.name);
  }
  for (const output of outputs) {
    const code = elementTypeOf(output);
    if (code === DataType.FLOAT) continue;
    const producer = (graph.node as NodeProto[]).find((node) => node.output.includes(output.name));
    if (!producer) throw new Error(`The ONNX output "${output.name}" is not produced by a node, so it cannot be cast to float32`);
    const inner = `${output.name}__atelier_typed`;
    producer.output = producer.output.map((name) => (name === output.name ? inner : name));
    renameUses(graph, output.name, inner);
    for (const info of graph.valueInfo as ValueInfoProto[]) if (info.name === output.name) info.name = inner;
    appended.push(castNode(inner, output.name, DataType.FLOAT));
    setElementType(output, DataType.FLOAT);
    cast.push(output.name);
  }
  if (cast.length === 0) return { bytes, declared, cast };
  // Nodes must stay in topological order: input casts first, output casts last.
  graph.node = [...prepended, ...(graph.node as NodeProto[]), ...appended];
  return { bytes: onnx.ModelProto.encode(model).finish(), declared, cast };
}
