/**
 * A small typed builder for ONNX graphs over the `onnx-proto` protobuf classes: float32 and int64
 * initializers, nodes with typed attributes, graph inputs/outputs with fixed or symbolic dims, and
 * serialisation to the bytes `onnxruntime-node` loads.
 */
import onnxProto from "onnx-proto";

// onnx-proto is CommonJS; under Node ESM its exports arrive as the default import.
const { onnx } = onnxProto;

/** Default operator set: 17 is supported by onnxruntime-node 1.30 and has every op the converters use. */
export const DEFAULT_OPSET = 17;
/** IR version 8 pairs with opsets up to 18. */
export const DEFAULT_IR_VERSION = 8;

/** A tensor dimension: a fixed size, a symbolic name (dynamic, e.g. `"batch"`), or `null` (unknown). */
export type Dim = number | string | null;

/** Element types the builder declares for graph inputs and outputs. */
export type ElementType = "float32" | "int64";

/** A node attribute with its ONNX kind made explicit, so `1` and `1.0` cannot be confused. */
export type OnnxAttribute =
  | { kind: "int"; value: number }
  | { kind: "ints"; value: readonly number[] }
  | { kind: "float"; value: number }
  | { kind: "floats"; value: readonly number[] }
  | { kind: "string"; value: string };

/** Constructors for {@link OnnxAttribute}: `attr.ints([3, 3])`, `attr.float(1e-3)`, `attr.string("DCR")`. */
export const attr = {
  int: (value: number): OnnxAttribute => ({ kind: "int", value }),
  ints: (value: readonly number[]): OnnxAttribute => ({ kind: "ints", value }),
  float: (value: number): OnnxAttribute => ({ kind: "float", value }),
  floats: (value: readonly number[]): OnnxAttribute => ({ kind: "floats", value }),
  string: (value: string): OnnxAttribute => ({ kind: "string", value }),
};

/** One node to add; `outputs` defaults to a single fresh name derived from the op type. */
export interface NodeSpec {
  opType: string;
  inputs: readonly string[];
  outputs?: readonly string[];
  attributes?: Readonly<Record<string, OnnxAttribute>>;
  name?: string;
}

/** A graph input or output as declared in the model. */
export interface ValueSignature {
  name: string;
  elementType: ElementType;
  dims: Dim[];
}

/** Model-level settings. */
export interface OnnxGraphOptions {
  graphName?: string;
  opset?: number;
  irVersion?: number;
  producerName?: string;
  producerVersion?: string;
  docString?: string;
}

const ELEMENT_TYPE_CODE: Record<ElementType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int64: onnx.TensorProto.DataType.INT64,
};

/** Replaces characters outside `[A-Za-z0-9_.]` with `_` so names stay readable in any tool. */
export function sanitizeName(raw: string): string {
  const cleaned = raw.replace(/[^A-Za-z0-9_.]/g, "_");
  return cleaned.length > 0 ? cleaned : "_";
}

function float32Bytes(data: Float32Array): Uint8Array {
  // ONNX raw_data is little-endian whatever the host is.
  const bytes = new Uint8Array(data.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < data.length; i++) view.setFloat32(i * 4, data[i]!, true);
  return bytes;
}

function int64Bytes(data: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(data.length * 8);
  const view = new DataView(bytes.buffer);
  data.forEach((v, i) => {
    if (!Number.isSafeInteger(v)) throw new Error(`int64 initializer value ${v} is not a safe integer`);
    view.setBigInt64(i * 8, BigInt(v), true);
  });
  return bytes;
}

function toAttributeProto(name: string, a: OnnxAttribute): InstanceType<typeof onnx.AttributeProto> {
  const T = onnx.AttributeProto.AttributeType;
  const checkInt = (v: number) => {
    if (!Number.isSafeInteger(v)) throw new Error(`attribute ${name}: ${v} is not an integer`);
    return v;
  };
  switch (a.kind) {
    case "int":
      return onnx.AttributeProto.create({ name, type: T.INT, i: checkInt(a.value) });
    case "ints":
      return onnx.AttributeProto.create({ name, type: T.INTS, ints: a.value.map(checkInt) });
    case "float":
      return onnx.AttributeProto.create({ name, type: T.FLOAT, f: a.value });
    case "floats":
      return onnx.AttributeProto.create({ name, type: T.FLOATS, floats: [...a.value] });
    case "string":
      return onnx.AttributeProto.create({ name, type: T.STRING, s: new TextEncoder().encode(a.value) });
  }
}

function toValueInfo(v: ValueSignature): InstanceType<typeof onnx.ValueInfoProto> {
  const dim = v.dims.map((d) =>
    typeof d === "number" ? { dimValue: d } : typeof d === "string" ? { dimParam: d } : {},
  );
  return onnx.ValueInfoProto.create({
    name: v.name,
    type: { tensorType: { elemType: ELEMENT_TYPE_CODE[v.elementType], shape: { dim } } },
  });
}

/**
 * Accumulates one ONNX graph. Every name (initializer, node output, graph input) is unique across the
 * graph; {@link OnnxGraphBuilder.uniqueName} hands out fresh ones.
 */
export class OnnxGraphBuilder {
  private readonly options: Required<Omit<OnnxGraphOptions, "docString">> & { docString: string };
  private readonly usedNames = new Set<string>();
  private readonly reservedNames = new Set<string>();
  private readonly nodeNameCounter = new Map<string, number>();
  private readonly initializers: InstanceType<typeof onnx.TensorProto>[] = [];
  private readonly nodes: InstanceType<typeof onnx.NodeProto>[] = [];
  private readonly graphInputs: ValueSignature[] = [];
  private readonly graphOutputs: ValueSignature[] = [];

  constructor(options: OnnxGraphOptions = {}) {
    this.options = {
      graphName: options.graphName ?? "graph",
      opset: options.opset ?? DEFAULT_OPSET,
      irVersion: options.irVersion ?? DEFAULT_IR_VERSION,
      producerName: options.producerName ?? "atelier-convert",
      producerVersion: options.producerVersion ?? "1",
      docString: options.docString ?? "",
    };
  }

  /** Sets the model's doc string (shown by viewers such as Netron; used to record I/O conventions). */
  setDocString(docString: string): void {
    this.options.docString = docString;
  }

  /** A name not used yet in this graph, derived from `base` (sanitised; suffixed `_2`, `_3`… on clashes). */
  uniqueName(base: string): string {
    const clean = sanitizeName(base);
    if (!this.usedNames.has(clean)) {
      this.usedNames.add(clean);
      return clean;
    }
    for (let i = 2; ; i++) {
      const candidate = `${clean}_${i}`;
      if (!this.usedNames.has(candidate)) {
        this.usedNames.add(candidate);
        return candidate;
      }
    }
  }

  /**
   * Keeps `name` out of {@link OnnxGraphBuilder.uniqueName}'s reach so a later input, output or node
   * output can take it exactly (public names are fixed before the graph body is built).
   */
  reserveName(name: string): void {
    if (this.usedNames.has(name)) throw new Error(`ONNX name "${name}" is already used in this graph`);
    this.usedNames.add(name);
    this.reservedNames.add(name);
  }

  private claim(name: string): string {
    if (this.reservedNames.delete(name)) return name;
    if (this.usedNames.has(name)) throw new Error(`ONNX name "${name}" is already used in this graph`);
    this.usedNames.add(name);
    return name;
  }

  /** Adds a float32 constant; returns its (unique) name. `data.length` must match `dims`. */
  addFloatInitializer(name: string, dims: readonly number[], data: Float32Array): string {
    return this.addInitializer(name, dims, data.length, onnx.TensorProto.DataType.FLOAT, () => float32Bytes(data));
  }

  /** Adds an int64 constant (shapes for Reshape, axes…); returns its (unique) name. */
  addInt64Initializer(name: string, dims: readonly number[], data: readonly number[]): string {
    return this.addInitializer(name, dims, data.length, onnx.TensorProto.DataType.INT64, () => int64Bytes(data));
  }

  private addInitializer(name: string, dims: readonly number[], count: number, dataType: number, rawData: () => Uint8Array): string {
    const expected = dims.reduce((a, b) => a * b, 1);
    if (count !== expected) {
      throw new Error(`initializer ${name}: ${count} values for dims [${dims.join(", ")}] (${expected} expected)`);
    }
    const unique = this.uniqueName(name);
    this.initializers.push(onnx.TensorProto.create({ name: unique, dims: [...dims], dataType, rawData: rawData() }));
    return unique;
  }

  /** A scalar float32 constant (dims `[]`), for Mul/Add by a number. */
  addScalar(name: string, value: number): string {
    return this.addFloatInitializer(name, [], Float32Array.of(value));
  }

  /** Declares a graph input; the name is used exactly as given. */
  addInput(name: string, dims: readonly Dim[], elementType: ElementType = "float32"): string {
    this.graphInputs.push({ name: this.claim(name), elementType, dims: [...dims] });
    return name;
  }

  /** Declares a graph output; some node must produce a value of that name. */
  addOutput(name: string, dims: readonly Dim[], elementType: ElementType = "float32"): string {
    this.graphOutputs.push({ name, elementType, dims: [...dims] });
    return name;
  }

  /** Adds a node; returns its output names (given ones are claimed, missing ones generated). */
  addNode(spec: NodeSpec): string[] {
    const outputs = spec.outputs ? spec.outputs.map((o) => this.claim(o)) : [this.uniqueName(spec.opType.toLowerCase())];
    this.pushNode(spec, outputs);
    return outputs;
  }

  /** Shorthand for a one-output node; `outputBase` seeds the generated (unique) output name. */
  op(opType: string, inputs: readonly string[], attributes?: Readonly<Record<string, OnnxAttribute>>, outputBase?: string): string {
    const output = this.uniqueName(outputBase ?? opType.toLowerCase());
    this.pushNode({ opType, inputs, ...(attributes ? { attributes } : {}) }, [output]);
    return output;
  }

  private pushNode(spec: NodeSpec, outputs: string[]): void {
    const count = (this.nodeNameCounter.get(spec.opType) ?? 0) + 1;
    this.nodeNameCounter.set(spec.opType, count);
    this.nodes.push(
      onnx.NodeProto.create({
        name: spec.name ?? `${spec.opType}_${count}`,
        opType: spec.opType,
        input: [...spec.inputs],
        output: outputs,
        attribute: Object.entries(spec.attributes ?? {}).map(([k, v]) => toAttributeProto(k, v)),
      }),
    );
  }

  /** The declared inputs and outputs, in order. */
  signature(): { inputs: ValueSignature[]; outputs: ValueSignature[] } {
    const copy = (v: ValueSignature) => ({ ...v, dims: [...v.dims] });
    return { inputs: this.graphInputs.map(copy), outputs: this.graphOutputs.map(copy) };
  }

  /** The protobuf model object (for inspection); {@link OnnxGraphBuilder.toBytes} serialises it. */
  toModelProto(): InstanceType<typeof onnx.ModelProto> {
    const produced = new Set<string>([
      ...this.graphInputs.map((i) => i.name),
      ...this.initializers.map((t) => t.name),
      ...this.nodes.flatMap((n) => n.output),
    ]);
    for (const o of this.graphOutputs) {
      if (!produced.has(o.name)) throw new Error(`graph output "${o.name}" is not produced by any node`);
    }
    return onnx.ModelProto.create({
      irVersion: this.options.irVersion,
      producerName: this.options.producerName,
      producerVersion: this.options.producerVersion,
      docString: this.options.docString,
      opsetImport: [{ domain: "", version: this.options.opset }],
      graph: onnx.GraphProto.create({
        name: this.options.graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.graphInputs.map(toValueInfo),
        output: this.graphOutputs.map(toValueInfo),
      }),
    });
  }

  /** The serialised model, ready for `InferenceSession.create(bytes)` or writing to a `.onnx` file. */
  toBytes(): Uint8Array {
    return onnx.ModelProto.encode(this.toModelProto()).finish();
  }
}
