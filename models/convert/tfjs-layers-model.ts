/**
 * Reads a TF.js "layers model" folder (`model.json` with a Keras topology and a `weightsManifest`,
 * plus binary weight shards) into a plain description: the Keras functional graph and a map of
 * float32 weights by name. No TensorFlow code is involved.
 */
import fs from "node:fs/promises";
import path from "node:path";

/** One float32 weight in row-major order, with the shape the model declares for it. */
export interface WeightTensor {
  shape: number[];
  data: Float32Array;
}

/** A reference to one output tensor of one call ("node") of a layer, as Keras writes it. */
export interface KerasTensorRef {
  layer: string;
  nodeIndex: number;
  tensorIndex: number;
}

/** One layer of a Keras functional model. */
export interface KerasLayer {
  className: string;
  name: string;
  /** The layer's Keras config, as stored (snake_case keys). */
  config: Record<string, unknown>;
  /** One entry per call of the layer; each lists the tensors it was called on. */
  inboundNodes: KerasTensorRef[][];
}

/** A Keras model as a functional graph (Sequential models are rewritten into this form). */
export interface KerasFunctionalModel {
  name: string;
  layers: KerasLayer[];
  inputs: KerasTensorRef[];
  outputs: KerasTensorRef[];
  kerasVersion?: string;
}

/** A TF.js layers model read from disk. */
export interface TfjsLayersModel {
  model: KerasFunctionalModel;
  weights: Map<string, WeightTensor>;
}

/** One entry of a `weightsManifest` group, as TF.js writes it. */
export interface TfjsWeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: unknown;
}

interface WeightGroup {
  paths: string[];
  weights: TfjsWeightSpec[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function fail(message: string): never {
  throw new Error(`TF.js layers model: ${message}`);
}

/** Keras 2 writes `["layer", node, tensor, {kwargs}]`; Keras 3 writes `{keras_history: [...]}` inside `args`. */
function parseTensorRef(raw: unknown): KerasTensorRef {
  if (Array.isArray(raw) && typeof raw[0] === "string") {
    return { layer: raw[0], nodeIndex: Number(raw[1] ?? 0), tensorIndex: Number(raw[2] ?? 0) };
  }
  if (isRecord(raw) && isRecord(raw.config) && Array.isArray(raw.config.keras_history)) {
    const [layer, nodeIndex, tensorIndex] = raw.config.keras_history as [string, number, number];
    return { layer, nodeIndex, tensorIndex };
  }
  return fail(`unrecognised inbound tensor reference ${JSON.stringify(raw)}`);
}

function collectKeras3Refs(value: unknown, into: KerasTensorRef[]): void {
  if (Array.isArray(value)) {
    for (const v of value) collectKeras3Refs(v, into);
  } else if (isRecord(value)) {
    if (value.class_name === "__keras_tensor__") into.push(parseTensorRef(value));
    else for (const v of Object.values(value)) collectKeras3Refs(v, into);
  }
}

function parseInboundNodes(raw: unknown): KerasTensorRef[][] {
  if (!Array.isArray(raw)) return [];
  return raw.map((node) => {
    if (isRecord(node)) {
      const refs: KerasTensorRef[] = [];
      collectKeras3Refs(node.args, refs);
      return refs;
    }
    if (!Array.isArray(node)) fail(`unrecognised inbound node ${JSON.stringify(node)}`);
    return node.map(parseTensorRef);
  });
}

function parseLayer(raw: unknown): KerasLayer {
  if (!isRecord(raw) || typeof raw.class_name !== "string" || !isRecord(raw.config)) {
    fail(`unrecognised layer entry ${JSON.stringify(raw).slice(0, 200)}`);
  }
  const name = typeof raw.name === "string" ? raw.name : String(raw.config.name);
  return { className: raw.class_name, name, config: raw.config, inboundNodes: parseInboundNodes(raw.inbound_nodes) };
}

function parseRefList(raw: unknown): KerasTensorRef[] {
  if (!Array.isArray(raw)) fail(`expected a list of input/output layers, got ${JSON.stringify(raw)}`);
  // A single reference may be stored unwrapped.
  if (typeof raw[0] === "string") return [parseTensorRef(raw)];
  return raw.map(parseTensorRef);
}

/** Sequential models list layers without connections; chain them and add the implicit input layer. */
function sequentialAsFunctional(name: string, rawLayers: unknown[]): KerasFunctionalModel {
  const layers = rawLayers.map(parseLayer);
  const first = layers[0] ?? fail("Sequential model without layers");
  const chained: KerasLayer[] = [];
  let previous: string;
  if (first.className === "InputLayer") {
    chained.push({ ...first, inboundNodes: [] });
    previous = first.name;
  } else {
    const shape = first.config.batch_input_shape ?? first.config.batch_shape;
    if (!Array.isArray(shape)) fail(`Sequential model: first layer "${first.name}" declares no batch_input_shape`);
    previous = `${first.name}_input`;
    chained.push({ className: "InputLayer", name: previous, config: { name: previous, batch_input_shape: shape }, inboundNodes: [] });
    chained.push({ ...first, inboundNodes: [[{ layer: previous, nodeIndex: 0, tensorIndex: 0 }]] });
    previous = first.name;
  }
  for (const layer of layers.slice(1)) {
    chained.push({ ...layer, inboundNodes: [[{ layer: previous, nodeIndex: 0, tensorIndex: 0 }]] });
    previous = layer.name;
  }
  return {
    name,
    layers: chained,
    inputs: [{ layer: chained[0]!.name, nodeIndex: 0, tensorIndex: 0 }],
    outputs: [{ layer: previous, nodeIndex: 0, tensorIndex: 0 }],
  };
}

/** Turns the `modelTopology` of a `model.json` into a {@link KerasFunctionalModel}. */
export function parseKerasTopology(modelTopology: unknown): KerasFunctionalModel {
  if (!isRecord(modelTopology)) fail("modelTopology is missing");
  // Python-converted files wrap the model in `model_config`; TF.js-saved ones do not.
  const modelConfig = isRecord(modelTopology.model_config) ? modelTopology.model_config : modelTopology;
  const kerasVersion = typeof modelTopology.keras_version === "string" ? modelTopology.keras_version : undefined;
  const className = modelConfig.class_name;
  const config = modelConfig.config;
  if (className === "Sequential") {
    // Older files store the layer list directly as the config.
    const layers = Array.isArray(config) ? config : isRecord(config) && Array.isArray(config.layers) ? config.layers : undefined;
    if (!layers) fail("Sequential model without layers");
    const name = isRecord(config) && typeof config.name === "string" ? config.name : "sequential";
    return { ...sequentialAsFunctional(name, layers), ...(kerasVersion ? { kerasVersion } : {}) };
  }
  if (className !== "Functional" && className !== "Model") fail(`unsupported model class "${String(className)}"`);
  if (!isRecord(config) || !Array.isArray(config.layers)) fail("functional model without layers");
  return {
    name: typeof config.name === "string" ? config.name : "model",
    layers: config.layers.map(parseLayer),
    inputs: parseRefList(config.input_layers),
    outputs: parseRefList(config.output_layers),
    ...(kerasVersion ? { kerasVersion } : {}),
  };
}

function parseWeightGroups(manifest: unknown): WeightGroup[] {
  if (!Array.isArray(manifest)) fail("weightsManifest is missing");
  return manifest.map((g) => {
    if (!isRecord(g) || !Array.isArray(g.paths) || !Array.isArray(g.weights)) fail("malformed weightsManifest group");
    return { paths: g.paths as string[], weights: g.weights as TfjsWeightSpec[] };
  });
}

/**
 * Slices one weight group's concatenated shard bytes into float32 tensors. Only plain float32 is
 * accepted: quantized (uint8/uint16/float16) and integer weights would need dequantising rules this
 * converter does not implement, so they are rejected rather than misread.
 */
export function decodeWeightGroup(group: { weights: readonly TfjsWeightSpec[] }, bytes: Uint8Array, into: Map<string, WeightTensor>): void {
  let offset = 0;
  for (const spec of group.weights) {
    if (spec.quantization !== undefined && spec.quantization !== null) {
      fail(`weight "${spec.name}" is quantized (${JSON.stringify(spec.quantization)}); only float32 weights are supported`);
    }
    if (spec.dtype !== "float32") fail(`weight "${spec.name}" has dtype ${spec.dtype}; only float32 weights are supported`);
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const byteLength = count * 4;
    if (offset + byteLength > bytes.length) {
      fail(`weight shards end after ${bytes.length} bytes but "${spec.name}" needs bytes ${offset}..${offset + byteLength}`);
    }
    // Copy so the tensor is aligned and independent of the shard buffer; shards are little-endian.
    const view = new DataView(bytes.buffer, bytes.byteOffset + offset, byteLength);
    const data = new Float32Array(count);
    for (let i = 0; i < count; i++) data[i] = view.getFloat32(i * 4, true);
    into.set(spec.name, { shape: [...spec.shape], data });
    offset += byteLength;
  }
  if (offset !== bytes.length) fail(`weight shards hold ${bytes.length} bytes but the manifest describes ${offset}`);
}

/**
 * Reads `<modelDir>/model.json` and its weight shards (each manifest group's shards concatenated in
 * the listed order).
 */
export async function readTfjsLayersModel(modelDir: string): Promise<TfjsLayersModel> {
  const json: unknown = JSON.parse(await fs.readFile(path.join(modelDir, "model.json"), "utf8"));
  if (!isRecord(json)) fail(`${modelDir}/model.json is not a JSON object`);
  if (json.format !== undefined && json.format !== "layers-model") {
    fail(`${modelDir}/model.json has format "${String(json.format)}"; only layers models are supported`);
  }
  const model = parseKerasTopology(json.modelTopology);
  const weights = new Map<string, WeightTensor>();
  for (const group of parseWeightGroups(json.weightsManifest)) {
    const shards = await Promise.all(group.paths.map((p) => fs.readFile(path.join(modelDir, p))));
    decodeWeightGroup(group, new Uint8Array(Buffer.concat(shards)), weights);
  }
  return { model, weights };
}
