/**
 * ml5 fast style transfer checkpoints (deeplearn.js raw float32 variables) converted to ONNX and
 * compared with the mirror's reference ONNX files, and with a TF.js re-statement of ml5's
 * `StyleTransfer.transferInternal` run on the same checkpoint variables.
 */
import fs from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { ConvertedOnnxModel } from "../../models/convert/converted-model.js";
import { readDeeplearnCheckpoint } from "../../models/convert/deeplearn-checkpoint.js";
import { FAST_STYLE_SIGNATURE, buildFastStyleOnnx } from "../../models/convert/fast-style-checkpoint-to-onnx.js";
import { permuteTensor } from "../../models/convert/permute-tensor.js";
import type { WeightTensor } from "../../models/convert/tfjs-layers-model.js";
import { hasMirrorModel, hasTestPhotos, mirrorPath, testPhoto } from "../support/test-assets.js";
import { maxAbsDifference } from "./numeric.js";
import { onnxSession, runOnnxOutput } from "./onnx-run.js";
import { type PhotoCrop, photoCrop } from "./photo-crop.js";
import { tf, useTfjsCpu } from "./tfjs-reference.js";

const STYLES = ["udnie", "mathura"] as const;
const CROP = { left: 170, top: 60, width: 96, height: 64 };
const available = hasMirrorModel("style-fast-ml5") && hasTestPhotos();

/** ml5 `transferInternal` in TF.js (NHWC, batch 1), variables by ml5's numeric ids; returns 0..255. */
function ml5Transfer(variables: ReadonlyMap<string, WeightTensor>, image: tf.Tensor4D): tf.Tensor4D {
  const v = (id: number) => {
    const w = variables.get(id === 0 ? "Variable" : `Variable_${id}`)!;
    return tf.tensor(w.data, w.shape);
  };
  const instanceNorm = (x: tf.Tensor4D, id: number) => {
    const { mean, variance } = tf.moments(x, [1, 2], true);
    const normalized = tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-3)));
    return tf.add(tf.mul(v(id + 1), normalized), v(id)) as tf.Tensor4D;
  };
  const conv = (x: tf.Tensor4D, strides: number, relu: boolean, id: number) => {
    const y = instanceNorm(tf.conv2d(x, v(id) as tf.Tensor4D, strides, "same"), id + 1);
    return relu ? tf.relu(y) : y;
  };
  const convT = (x: tf.Tensor4D, filters: number, strides: number, id: number) => {
    const [, h, w] = x.shape;
    const y = tf.conv2dTranspose(x, v(id) as tf.Tensor4D, [1, h * strides, w * strides, filters], strides, "same");
    return tf.relu(instanceNorm(y, id + 1));
  };
  const residual = (x: tf.Tensor4D, id: number) => tf.add(conv(conv(x, 1, true, id), 1, false, id + 3), x) as tf.Tensor4D;
  return tf.tidy(() => {
    let x = conv(conv(conv(image, 1, true, 0), 2, true, 3), 2, true, 6);
    for (const id of [9, 15, 21, 27, 33]) x = residual(x, id);
    x = conv(convT(convT(x, 64, 2, 39), 32, 2, 42), 1, false, 45);
    return tf.clipByValue(tf.add(tf.mul(tf.tanh(x), 150), 255 / 2), 0, 255) as tf.Tensor4D;
  });
}

async function tfjsReference(variables: ReadonlyMap<string, WeightTensor>, nhwc: Float32Array, height: number, width: number): Promise<Float32Array> {
  const input = tf.tensor4d(nhwc, [1, height, width, 3]);
  const output = ml5Transfer(variables, input);
  const data = (await output.data()) as Float32Array;
  const outShape = output.shape;
  tf.dispose([input, output]);
  return permuteTensor({ shape: [...outShape], data }, [0, 3, 1, 2]).data;
}

describe.skipIf(!available)("ml5 fast-style checkpoints → ONNX", () => {
  let crop: PhotoCrop;

  beforeAll(async () => {
    await useTfjsCpu();
    crop = await photoCrop(testPhoto("chelsea.png"), CROP);
  });

  describe.each(STYLES)("%s", (style) => {
    let variables: Map<string, WeightTensor>;
    let converted: ConvertedOnnxModel;

    beforeAll(async () => {
      variables = await readDeeplearnCheckpoint(mirrorPath("style-fast-ml5", "raw", style));
      converted = buildFastStyleOnnx(variables);
    });

    it("uses all 48 checkpoint variables and declares the documented signature", () => {
      expect(variables.size).toBe(48);
      expect(converted.unusedWeights).toEqual([]);
      expect(converted.signature.inputs).toEqual([{ name: "input", elementType: "float32", dims: [...FAST_STYLE_SIGNATURE.input.dims] }]);
      expect(converted.signature.outputs).toEqual([{ name: "output", elementType: "float32", dims: [...FAST_STYLE_SIGNATURE.output.dims] }]);
    });

    it(`matches ml5-fast-style-${style}.onnx on a 96x64 photo crop`, async () => {
      const feeds = { input: { data: crop.nchw, dims: [1, 3, crop.height, crop.width] } };
      const ours = await runOnnxOutput(await onnxSession(converted.bytes), feeds, "output");
      const referenceBytes = await fs.readFile(mirrorPath("style-fast-ml5", `ml5-fast-style-${style}.onnx`));
      const reference = await runOnnxOutput(await onnxSession(new Uint8Array(referenceBytes)), feeds, "output");
      expect(ours.dims).toEqual([1, 3, crop.height, crop.width]);
      const difference = maxAbsDifference(ours.data, reference.data);
      console.log(`[fast-style] ${style} ${crop.width}x${crop.height}: max |converted - reference ONNX| = ${difference.toExponential(3)} (0..255 output)`);
      expect(difference).toBeLessThan(0.05);
    });

    it("matches ml5's network restated in TF.js", async () => {
      const ours = await runOnnxOutput(await onnxSession(converted.bytes), { input: { data: crop.nchw, dims: [1, 3, crop.height, crop.width] } }, "output");
      const expected = await tfjsReference(variables, crop.nhwc, crop.height, crop.width);
      const difference = maxAbsDifference(ours.data, expected);
      console.log(`[fast-style] ${style} ${crop.width}x${crop.height}: max |converted - TF.js ml5 network| = ${difference.toExponential(3)} (0..255 output)`);
      expect(difference).toBeLessThan(0.05);
    });
  });

  it("sizes that are not multiples of 4 give ml5's 4*ceil(size/4) output, also matching TF.js", async () => {
    const variables = await readDeeplearnCheckpoint(mirrorPath("style-fast-ml5", "raw", "udnie"));
    const odd = await photoCrop(testPhoto("chelsea.png"), { left: 40, top: 30, width: 42, height: 30 });
    const ours = await runOnnxOutput(await onnxSession(buildFastStyleOnnx(variables).bytes), { input: { data: odd.nchw, dims: [1, 3, 30, 42] } }, "output");
    expect(ours.dims).toEqual([1, 3, 32, 44]);
    const difference = maxAbsDifference(ours.data, await tfjsReference(variables, odd.nhwc, 30, 42));
    console.log(`[fast-style] udnie 42x30 (→ 44x32): max |converted - TF.js ml5 network| = ${difference.toExponential(3)}`);
    expect(difference).toBeLessThan(0.05);
  });
});
