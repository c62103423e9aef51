/**
 * Layer semantics the published models do not exercise (odd sizes with stride-2 SAME padding, even
 * kernels, dilation, transposed convolutions whose kernel is smaller than the stride, Dense on
 * images, Reshape/Flatten element order, activations, merges, several inputs/outputs): small Keras
 * models are built and saved by TF.js itself, converted, and compared with TF.js's own predictions.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertKerasToOnnx } from "../../models/convert/keras-to-onnx.js";
import { permuteTensor } from "../../models/convert/permute-tensor.js";
import { readTfjsLayersModel } from "../../models/convert/tfjs-layers-model.js";
import { maxAbsDifference, seededUniform } from "./numeric.js";
import { onnxSession, runOnnx } from "./onnx-run.js";
import { type ShapedValues, predictAll, tf, useTfjsCpu } from "./tfjs-reference.js";

let workDir: string;
let seed = 1;

beforeAll(async () => {
  await useTfjsCpu();
  workDir = await fs.mkdtemp(path.join(os.tmpdir(), "keras-layers-"));
});
afterAll(async () => {
  await fs.rm(workDir, { recursive: true, force: true });
});

/** Seeded initialisers so kernels and (non-zero) biases are reproducible. */
function init() {
  return {
    kernelInitializer: tf.initializers.randomUniform({ minval: -0.5, maxval: 0.5, seed: seed++ }),
    biasInitializer: tf.initializers.randomUniform({ minval: -0.5, maxval: 0.5, seed: seed++ }),
  };
}

/** Saves `model` the way TF.js writes a layers-model folder (model.json + one shard) and reads it back with the converter's reader. */
async function saveAndRead(model: tf.LayersModel, name: string) {
  const dir = path.join(workDir, name);
  await fs.mkdir(dir);
  await model.save(
    tf.io.withSaveHandler(async (artifacts) => {
      const manifest = { format: "layers-model", modelTopology: artifacts.modelTopology, weightsManifest: [{ paths: ["shard1.bin"], weights: artifacts.weightSpecs }] };
      await fs.writeFile(path.join(dir, "model.json"), JSON.stringify(manifest));
      await fs.writeFile(path.join(dir, "shard1.bin"), Buffer.from(artifacts.weightData as ArrayBuffer));
      return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: "JSON" } };
    }),
  );
  return readTfjsLayersModel(dir);
}

/** Keras order → ONNX order for comparison (images NHWC → NCHW). */
function toOnnxOrder(v: ShapedValues): Float32Array {
  return v.shape.length === 4 ? permuteTensor({ shape: v.shape, data: v.data }, [0, 3, 1, 2]).data : v.data;
}

/** Converts `model`, runs both on `inputs` (Keras order) and returns max |difference| per output. */
async function compare(model: tf.LayersModel, name: string, inputs: ShapedValues[]): Promise<number[]> {
  const converted = convertKerasToOnnx(await saveAndRead(model, name));
  expect(converted.unusedWeights).toEqual([]);
  const feeds = Object.fromEntries(
    converted.signature.inputs.map((sig, i) => {
      const v = inputs[i]!;
      const dims = v.shape.length === 4 ? [v.shape[0]!, v.shape[3]!, v.shape[1]!, v.shape[2]!] : v.shape;
      return [sig.name, { data: toOnnxOrder(v), dims }];
    }),
  );
  const results = await runOnnx(await onnxSession(converted.bytes), feeds);
  const expected = await predictAll(model, inputs);
  return converted.signature.outputs.map((sig, i) => {
    const ours = results[sig.name]!;
    const reference = expected[i]!;
    const referenceDims = reference.shape.length === 4 ? [reference.shape[0], reference.shape[3], reference.shape[1], reference.shape[2]] : reference.shape;
    expect(ours.dims, `output ${sig.name}`).toEqual(referenceDims);
    return maxAbsDifference(ours.data, toOnnxOrder(reference));
  });
}

/** Applies a layer to symbolic tensors (TF.js types `apply` loosely). */
function link(layer: tf.layers.Layer, input: tf.SymbolicTensor | tf.SymbolicTensor[]): tf.SymbolicTensor {
  return layer.apply(input) as tf.SymbolicTensor;
}

function image(height: number, width: number, channels: number): ShapedValues {
  return { data: seededUniform(seed++, height * width * channels, -1, 1), shape: [1, height, width, channels] };
}

describe("Keras layers → ONNX agree with TF.js", () => {
  it.each([
    [13, 18],
    [16, 16],
    [7, 9],
  ])("convolutions with TF SAME/VALID padding on a %ix%i input", async (height, width) => {
    const input = tf.input({ shape: [null, null, 3], name: "image" });
    const even = link(tf.layers.conv2d({ filters: 6, kernelSize: 4, strides: 2, padding: "same", activation: "relu", name: "even_s2", ...init() }), input);
    const dilated = link(tf.layers.conv2d({ filters: 5, kernelSize: 3, dilationRate: 2, padding: "same", activation: "tanh", name: "dilated", ...init() }), even);
    const evenS1 = link(tf.layers.conv2d({ filters: 5, kernelSize: 2, padding: "same", activation: "sigmoid", name: "even_s1", ...init() }), even);
    const joined = link(tf.layers.concatenate({ name: "joined" }), [dilated, evenS1]);
    const odd = link(tf.layers.conv2d({ filters: 4, kernelSize: 5, strides: 3, padding: "same", activation: "elu", name: "odd_s3", ...init() }), joined);
    const valid = link(tf.layers.conv2d({ filters: 4, kernelSize: 3, strides: 2, padding: "valid", activation: "softplus", name: "valid_s2", ...init() }), input);
    const model = tf.model({ inputs: input, outputs: [joined, odd, valid], name: `convs_${height}x${width}` });
    const differences = await compare(model, `convs-${height}x${width}`, [image(height, width, 3)]);
    console.log(`[keras-layers] convs ${height}x${width}: max differences ${differences.map((d) => d.toExponential(2)).join(", ")}`);
    for (const d of differences) expect(d).toBeLessThan(1e-5);
  });

  it.each([
    [5, 7],
    [6, 6],
  ])("transposed convolutions (SAME/VALID, kernel < stride) and nearest upsampling on a %ix%i input", async (height, width) => {
    const input = tf.input({ shape: [null, null, 4], name: "features" });
    const same = link(tf.layers.conv2dTranspose({ filters: 3, kernelSize: 3, strides: 2, padding: "same", activation: "relu", name: "t_same", ...init() }), input);
    const evenSame = link(tf.layers.conv2dTranspose({ filters: 3, kernelSize: 4, strides: 2, padding: "same", name: "t_even_same", ...init() }), input);
    const valid = link(tf.layers.conv2dTranspose({ filters: 2, kernelSize: 3, strides: 2, padding: "valid", name: "t_valid", ...init() }), input);
    const small = link(tf.layers.conv2dTranspose({ filters: 2, kernelSize: 1, strides: 3, padding: "same", name: "t_small_same", ...init() }), input);
    const smallValid = link(tf.layers.conv2dTranspose({ filters: 2, kernelSize: 2, strides: 3, padding: "valid", name: "t_small_valid", ...init() }), input);
    const up = link(tf.layers.upSampling2d({ size: [2, 3], name: "up" }), input);
    const model = tf.model({ inputs: input, outputs: [same, evenSame, valid, small, smallValid, up], name: "transposed" });
    const differences = await compare(model, `transposed-${height}x${width}`, [image(height, width, 4)]);
    console.log(`[keras-layers] transposed ${height}x${width}: max differences ${differences.map((d) => d.toExponential(2)).join(", ")}`);
    for (const d of differences) expect(d).toBeLessThan(1e-5);
  });

  it("Dense on vectors and images, Reshape/Flatten element order, merges, two inputs", async () => {
    const vector = tf.input({ shape: [10], name: "vector" });
    const picture = tf.input({ shape: [4, 6, 3], name: "picture" });
    const dense = link(tf.layers.dense({ units: 24, activation: "selu", name: "dense", ...init() }), vector);
    const grid = link(tf.layers.reshape({ targetShape: [4, 6, 1], name: "grid" }), dense);
    const perPixel = link(tf.layers.dense({ units: 2, activation: "softmax", name: "per_pixel", ...init() }), picture);
    const gridConv = link(tf.layers.conv2d({ filters: 2, kernelSize: 3, padding: "same", activation: "swish", name: "grid_conv", ...init() }), grid);
    const sum = link(tf.layers.add({ name: "sum" }), [gridConv, perPixel]);
    const product = link(tf.layers.multiply({ name: "product" }), [gridConv, perPixel, sum]);
    const smaller = link(tf.layers.minimum({ name: "smaller" }), [product, sum]);
    const mean = link(tf.layers.average({ name: "mean" }), [smaller, gridConv]);
    const biggest = link(tf.layers.maximum({ name: "biggest" }), [mean, perPixel]);
    const relu6 = link(tf.layers.activation({ activation: "relu6", name: "relu6" }), biggest);
    const hard = link(tf.layers.activation({ activation: "hardSigmoid", name: "hard" }), relu6);
    const leaky = link(tf.layers.leakyReLU({ alpha: 0.2, name: "leaky" }), smaller);
    const flat = link(tf.layers.flatten({ name: "flat" }), leaky);
    const head = link(tf.layers.dense({ units: 5, activation: "softsign", name: "head", ...init() }), flat);
    const back = link(tf.layers.reshape({ targetShape: [2, -1, 3], name: "back" }), picture);
    const model = tf.model({ inputs: [vector, picture], outputs: [hard, head, back], name: "mixed" });
    const vectors = { data: seededUniform(seed++, 2 * 10, -1, 1), shape: [2, 10] };
    const pictures = { data: seededUniform(seed++, 2 * 4 * 6 * 3, -1, 1), shape: [2, 4, 6, 3] };
    const differences = await compare(model, "mixed", [vectors, pictures]);
    console.log(`[keras-layers] dense/reshape/merges: max differences ${differences.map((d) => d.toExponential(2)).join(", ")}`);
    for (const d of differences) expect(d).toBeLessThan(1e-5);
  });

  it("names several inputs/outputs after their (sanitised) Keras layers", async () => {
    const a = tf.input({ shape: [3], name: "first" });
    const b = tf.input({ shape: [3], name: "second" });
    const sum = link(tf.layers.add({ name: "sum" }), [a, b]);
    const scaled = link(tf.layers.dense({ units: 2, name: "scaled", ...init() }), sum);
    const converted = convertKerasToOnnx(await saveAndRead(tf.model({ inputs: [a, b], outputs: [sum, scaled] }), "names"));
    expect(converted.signature.inputs.map((i) => [i.name, i.dims])).toEqual([
      ["first", ["batch", 3]],
      ["second", ["batch", 3]],
    ]);
    expect(converted.signature.outputs.map((o) => [o.name, o.dims])).toEqual([
      ["sum", ["batch", 3]],
      ["scaled", ["batch", 2]],
    ]);
  });

  it("refuses unsupported layers and quantized weights with a clear message", async () => {
    const input = tf.input({ shape: [4] });
    const normed = link(tf.layers.batchNormalization({ name: "bn" }), input);
    const source = await saveAndRead(tf.model({ inputs: input, outputs: normed }), "unsupported");
    expect(() => convertKerasToOnnx(source)).toThrow(/BatchNormalization is not supported/);

    const dir = path.join(workDir, "quantized");
    await fs.mkdir(dir);
    const json = JSON.parse(await fs.readFile(path.join(workDir, "unsupported", "model.json"), "utf8"));
    json.weightsManifest[0].weights[0].dtype = "float32";
    json.weightsManifest[0].weights[0].quantization = { dtype: "uint8", scale: 0.1, min: 0 };
    await fs.writeFile(path.join(dir, "model.json"), JSON.stringify(json));
    await fs.copyFile(path.join(workDir, "unsupported", "shard1.bin"), path.join(dir, "shard1.bin"));
    await expect(readTfjsLayersModel(dir)).rejects.toThrow(/is quantized .* only float32 weights are supported/);
  });
});
