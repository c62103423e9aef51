/**
 * The independent reference for Keras conversions: TensorFlow.js (pure-JS CPU backend) running the
 * same `model.json`, loaded by TF.js's own weight reader through `tf.io.fromMemory`.
 */
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import * as tf from "@tensorflow/tfjs";

export { tf };

/** Selects the CPU backend (the only one without native code here); call before any TF.js work. */
export async function useTfjsCpu(): Promise<void> {
  await tf.setBackend("cpu");
  await tf.ready();
}

interface ModelJson {
  modelTopology: object;
  weightsManifest: { paths: string[]; weights: tf.io.WeightsManifestEntry[] }[];
}

/** Loads a TF.js layers model folder with every manifest group's shards concatenated in order. */
export async function loadReferenceModel(modelDir: string): Promise<tf.LayersModel> {
  const json = JSON.parse(await fs.readFile(path.join(modelDir, "model.json"), "utf8")) as ModelJson;
  const shards = await Promise.all(json.weightsManifest.flatMap((g) => g.paths).map((p) => fs.readFile(path.join(modelDir, p))));
  const all = Buffer.concat(shards);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer;
  const weightSpecs = json.weightsManifest.flatMap((g) => g.weights);
  return tf.loadLayersModel(tf.io.fromMemory({ modelTopology: json.modelTopology, weightSpecs, weightData }));
}

interface UpscalerJsModelDefinition {
  setup?: (tfjs: typeof tf) => void;
  inputRange: [number, number];
}

/**
 * Registers UpscalerJS's own `MultiplyBeta` / `PixelShuffle<N>x` layer classes (their `setup(tf)`
 * from the package's CommonJS build; the ESM build uses extensionless imports Node cannot load).
 */
export function registerUpscalerJsLayers(variant: string, scale: number): UpscalerJsModelDefinition {
  const definition = createRequire(import.meta.url)(`@upscalerjs/esrgan-${variant}/${scale}x`) as UpscalerJsModelDefinition;
  definition.setup?.(tf);
  return definition;
}

/** A tensor's values with its shape (Keras order: NHWC for images). */
export interface ShapedValues {
  data: Float32Array;
  shape: number[];
}

/** All outputs of `model` for the given inputs (Keras order). */
export async function predictAll(model: tf.LayersModel, inputs: ShapedValues[]): Promise<ShapedValues[]> {
  const tensors = inputs.map((i) => tf.tensor(i.data, i.shape, "float32"));
  const result = model.predict(tensors.length === 1 ? tensors[0]! : tensors);
  const outputs = Array.isArray(result) ? result : [result];
  const values = await Promise.all(outputs.map(async (o) => ({ data: (await o.data()) as Float32Array, shape: [...o.shape] })));
  tf.dispose([...tensors, ...outputs]);
  return values;
}
