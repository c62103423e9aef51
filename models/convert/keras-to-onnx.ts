/**
 * Converts a Keras functional model (channels_last, as read by tfjs-layers-model.ts) into an ONNX
 * graph that works in NCHW.
 *
 * Naming: a model with one input and one output gets `input` / `output`; with several, the Keras
 * layer names (sanitised). Either can be overridden per Keras name. Image inputs are declared
 * `[batch, C, height, width]`, dynamic wherever the Keras model leaves a size open (a model that
 * fixes 28×28 keeps it); other inputs keep their Keras shape with a dynamic batch. Only float32
 * inputs are supported.
 *
 * A layer called several times (shared weights) is emitted once per call, each with its own copy
 * of the weights.
 */
import type { ConvertedOnnxModel } from "./converted-model.js";
import { findLayerConverter, type LayerConversion, type LayerConverter } from "./keras-layer-converters.js";
import { type ConvertedTensor, type ShapeDim, declaredDims } from "./keras-layout.js";
import { OnnxGraphBuilder, sanitizeName } from "./onnx-graph.js";
import type { KerasFunctionalModel, KerasLayer, KerasTensorRef, TfjsLayersModel, WeightTensor } from "./tfjs-layers-model.js";

export type { ConvertedOnnxModel, OnnxModelSignature } from "./converted-model.js";

/** Options for {@link convertKerasToOnnx}. */
export interface KerasToOnnxOptions {
  /** ONNX input name per Keras input layer name (default: `input`, or the sanitised Keras names). */
  inputNames?: Readonly<Record<string, string>>;
  /** ONNX output name per Keras output layer name (default: `output`, or the sanitised Keras names). */
  outputNames?: Readonly<Record<string, string>>;
  /** Stored as the model's doc string: say here what the inputs/outputs mean (value range, colour order). */
  docString?: string;
  /** Converters for custom layer classes, tried before the built-in ones. */
  customLayers?: Readonly<Record<string, LayerConverter>>;
  /** ONNX opset (default 17). */
  opset?: number;
}

function refKey(ref: KerasTensorRef): string {
  return `${ref.layer}#${ref.nodeIndex}#${ref.tensorIndex}`;
}

/** Keras names weights `<layer>/<variable>`, sometimes under a model scope or with a `:0` suffix. */
function makeWeightLookup(weights: ReadonlyMap<string, WeightTensor>, used: Set<string>) {
  return (layer: KerasLayer, suffix: string): WeightTensor => {
    const wanted = `${layer.name}/${suffix}`;
    const candidates = [wanted, `${wanted}:0`];
    let found = candidates.find((n) => weights.has(n));
    if (found === undefined) {
      const scoped = [...weights.keys()].filter((n) => n.endsWith(`/${wanted}`) || n.endsWith(`/${wanted}:0`));
      if (scoped.length > 1) throw new Error(`layer "${layer.name}": several weights match ${wanted}: ${scoped.join(", ")}`);
      found = scoped[0];
    }
    if (found === undefined) throw new Error(`layer "${layer.name}" (${layer.className}): weight ${wanted} is missing from the model`);
    used.add(found);
    return weights.get(found)!;
  };
}

function batchInputShape(layer: KerasLayer): (number | null)[] {
  const dtype = layer.config.dtype;
  if (dtype !== undefined && dtype !== null && dtype !== "float32") {
    throw new Error(`input layer "${layer.name}" has dtype ${String(dtype)}; only float32 inputs are supported`);
  }
  const shape = layer.config.batch_input_shape ?? layer.config.batch_shape;
  if (!Array.isArray(shape)) throw new Error(`input layer "${layer.name}" declares no batch_input_shape`);
  return shape.map((d) => (typeof d === "number" ? d : null));
}

function defaultNames(refs: readonly KerasTensorRef[], single: string, overrides: Readonly<Record<string, string>>): string[] {
  return refs.map((r) => overrides[r.layer] ?? (refs.length === 1 ? single : sanitizeName(r.layer)));
}

/** Symbolic dims for an input: batch is shared; image height/width are per input when there are several. */
function inputShape(layer: KerasLayer, imageInputCount: number, onnxName: string): ShapeDim[] {
  const shape = batchInputShape(layer);
  const prefix = imageInputCount > 1 ? `${onnxName}_` : "";
  return shape.map((d, axis): ShapeDim => {
    if (d !== null) return d;
    if (axis === 0) return { symbol: "batch", factor: 1 };
    if (shape.length === 4 && axis === 1) return { symbol: `${prefix}height`, factor: 1 };
    if (shape.length === 4 && axis === 2) return { symbol: `${prefix}width`, factor: 1 };
    return { symbol: `${onnxName}_dim${axis}`, factor: 1 };
  });
}

/**
 * Converts `source` into an ONNX model. Layers are emitted in dependency order; every weight is
 * copied unchanged (only transposed into ONNX layouts).
 */
export function convertKerasToOnnx(source: TfjsLayersModel, options: KerasToOnnxOptions = {}): ConvertedOnnxModel {
  const { model, weights } = source;
  const docString = options.docString ?? `Converted from the Keras model "${model.name}" (channels_last) to NCHW.`;
  const graph = new OnnxGraphBuilder({
    graphName: sanitizeName(model.name),
    docString,
    ...(options.opset ? { opset: options.opset } : {}),
  });
  const usedWeights = new Set<string>();
  const weightOf = makeWeightLookup(weights, usedWeights);
  const tensors = new Map<string, ConvertedTensor>();
  const layersByName = new Map(model.layers.map((l) => [l.name, l]));

  const outputNames = defaultNames(model.outputs, "output", options.outputNames ?? {});
  for (const name of new Set(outputNames)) graph.reserveName(name);
  declareInputs(model, graph, tensors, layersByName, options.inputNames ?? {});

  // Emit each (layer, call) once all of its inputs exist; the config's layer order is usually
  // already topological, but this does not rely on it.
  const pending: { layer: KerasLayer; nodeIndex: number }[] = model.layers
    .filter((l) => l.className !== "InputLayer")
    .flatMap((layer) => layer.inboundNodes.map((_, nodeIndex) => ({ layer, nodeIndex })));
  while (pending.length > 0) {
    const readyIndex = pending.findIndex(({ layer, nodeIndex }) => layer.inboundNodes[nodeIndex]!.every((r) => tensors.has(refKey(r))));
    if (readyIndex < 0) {
      const stuck = pending.map((p) => p.layer.name).slice(0, 5).join(", ");
      throw new Error(`Keras graph has unresolvable inputs (layers ${stuck}…): a cycle or a reference to a missing layer`);
    }
    const { layer, nodeIndex } = pending.splice(readyIndex, 1)[0]!;
    const converter = findLayerConverter(layer.className, options.customLayers);
    if (!converter) throw new Error(`layer "${layer.name}": Keras layer class ${layer.className} is not supported`);
    const conversion: LayerConversion = {
      graph,
      layer,
      inputs: layer.inboundNodes[nodeIndex]!.map((r) => tensors.get(refKey(r))!),
      weight: (suffix) => weightOf(layer, suffix),
      outputBase: sanitizeName(nodeIndex === 0 ? layer.name : `${layer.name}_call${nodeIndex}`),
    };
    tensors.set(refKey({ layer: layer.name, nodeIndex, tensorIndex: 0 }), converter(conversion));
  }

  model.outputs.forEach((ref, i) => {
    const tensor = tensors.get(refKey(ref));
    if (!tensor) throw new Error(`model output ${ref.layer} was not produced`);
    // Identity gives the output its public name whatever node made it (ORT folds it away).
    graph.addNode({ opType: "Identity", inputs: [tensor.name], outputs: [outputNames[i]!] });
    graph.addOutput(outputNames[i]!, declaredDims(tensor.kerasShape));
  });

  return {
    bytes: graph.toBytes(),
    signature: graph.signature(),
    docString,
    unusedWeights: [...weights.keys()].filter((n) => !usedWeights.has(n)),
  };
}

function declareInputs(
  model: KerasFunctionalModel,
  graph: OnnxGraphBuilder,
  tensors: Map<string, ConvertedTensor>,
  layersByName: ReadonlyMap<string, KerasLayer>,
  overrides: Readonly<Record<string, string>>,
): void {
  const names = defaultNames(model.inputs, "input", overrides);
  const inputLayers = model.inputs.map((ref) => {
    const layer = layersByName.get(ref.layer);
    if (!layer || layer.className !== "InputLayer") throw new Error(`model input ${ref.layer} is not an InputLayer`);
    return layer;
  });
  const imageInputs = inputLayers.filter((l) => batchInputShape(l).length === 4).length;
  inputLayers.forEach((layer, i) => {
    const name = names[i]!;
    const kerasShape = inputShape(layer, imageInputs, name);
    graph.addInput(name, declaredDims(kerasShape));
    tensors.set(refKey(model.inputs[i]!), { name, kerasShape });
  });
}
