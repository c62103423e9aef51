/**
 * The ml5 Quick, Draw! CVAE decoder (TF.js layers model: Concatenate, Dense, Reshape to 7×7×16,
 * Conv2DTranspose, UpSampling2D) converted to ONNX, compared with the mirror's reference ONNX
 * (`cvae-quickdraw-decoder.onnx`) and with TF.js running the original model.json.
 */
import fs from "node:fs/promises";
import onnxProto from "onnx-proto";
import { beforeAll, describe, expect, it } from "vitest";
import type { ConvertedOnnxModel } from "../../models/convert/converted-model.js";
import { convertKerasToOnnx } from "../../models/convert/keras-to-onnx.js";
import { permuteTensor } from "../../models/convert/permute-tensor.js";
import { readTfjsLayersModel } from "../../models/convert/tfjs-layers-model.js";
import { hasMirrorModel, mirrorPath } from "../support/test-assets.js";
import { maxAbsDifference, seededUniform, seededUniformGenerator } from "./numeric.js";
import { onnxSession, runOnnxOutput } from "./onnx-run.js";
import { loadReferenceModel, predictAll, useTfjsCpu } from "./tfjs-reference.js";

const { onnx } = onnxProto;
const LATENT = 16;
const LABELS = 51;

/** Declared graph inputs/outputs of serialised ONNX bytes: name → dims (symbolic names kept). */
function declaredIo(bytes: Uint8Array): { inputs: Record<string, (string | number)[]>; outputs: Record<string, (string | number)[]> } {
  const graph = onnx.ModelProto.decode(bytes).graph as InstanceType<typeof onnx.GraphProto>;
  const describe = (values: typeof graph.input) =>
    Object.fromEntries(values.map((v) => [v.name!, v.type!.tensorType!.shape!.dim!.map((d) => d.dimParam || Number(d.dimValue))]));
  return { inputs: describe(graph.input), outputs: describe(graph.output) };
}

/** A batch of seeded latents (uniform [0, 1) like ml5) and one-hot labels (word index + 1, as ml5 does). */
function batch(seed: number, size: number): { latent: Float32Array; label: Float32Array } {
  const latent = seededUniform(seed, size * LATENT);
  const label = new Float32Array(size * LABELS);
  const pick = seededUniformGenerator(seed + 1000);
  for (let b = 0; b < size; b++) label[b * LABELS + 1 + Math.floor(pick() * 50)] = 1;
  return { latent, label };
}

describe.skipIf(!hasMirrorModel("cvae-quickdraw"))("cvae-quickdraw decoder → ONNX", () => {
  let converted: ConvertedOnnxModel;
  let referenceBytes: Uint8Array;

  beforeAll(async () => {
    const source = await readTfjsLayersModel(mirrorPath("cvae-quickdraw"));
    // Expose the reference's public names: latent, label → image.
    converted = convertKerasToOnnx(source, {
      inputNames: { latent_input: "latent", label: "label" },
      outputNames: { conv2d_transpose_3: "image" },
      docString: "ml5 CVAE Quick, Draw! decoder: latent [B,16] uniform 0..1, label one-hot [B,51] (index = word + 1) → image [B,1,28,28] sigmoid 0..1",
    });
    referenceBytes = new Uint8Array(await fs.readFile(mirrorPath("cvae-quickdraw", "cvae-quickdraw-decoder.onnx")));
  });

  it("declares the same input/output names and dims as the reference", () => {
    expect(converted.unusedWeights).toEqual([]);
    const reference = declaredIo(referenceBytes);
    expect(reference).toEqual({ inputs: { latent: ["batch", 16], label: ["batch", 51] }, outputs: { image: ["batch", 1, 28, 28] } });
    expect(declaredIo(converted.bytes)).toEqual(reference);
  });

  it.each([
    [1, 1],
    [2, 4],
    [3, 7],
  ])("matches the reference ONNX within 1e-4 (seed %i, batch %i)", async (seed, size) => {
    const { latent, label } = batch(seed, size);
    const feeds = { latent: { data: latent, dims: [size, LATENT] }, label: { data: label, dims: [size, LABELS] } };
    const ours = await runOnnxOutput(await onnxSession(converted.bytes), feeds, "image");
    const reference = await runOnnxOutput(await onnxSession(referenceBytes), feeds, "image");
    expect(ours.dims).toEqual([size, 1, 28, 28]);
    const difference = maxAbsDifference(ours.data, reference.data);
    console.log(`[cvae] seed ${seed} batch ${size}: max |converted - reference ONNX| = ${difference.toExponential(3)}`);
    expect(difference).toBeLessThanOrEqual(1e-4);
  });

  it("matches TF.js running the original model.json within 1e-4", async () => {
    await useTfjsCpu();
    const size = 5;
    const { latent, label } = batch(42, size);
    const model = await loadReferenceModel(mirrorPath("cvae-quickdraw"));
    const [expected] = await predictAll(model, [
      { data: latent, shape: [size, LATENT] },
      { data: label, shape: [size, LABELS] },
    ]);
    const expectedNchw = permuteTensor({ shape: expected!.shape, data: expected!.data }, [0, 3, 1, 2]).data;
    const ours = await runOnnxOutput(
      await onnxSession(converted.bytes),
      { latent: { data: latent, dims: [size, LATENT] }, label: { data: label, dims: [size, LABELS] } },
      "image",
    );
    const difference = maxAbsDifference(ours.data, expectedNchw);
    console.log(`[cvae] batch ${size}: max |converted - TF.js| = ${difference.toExponential(3)}`);
    expect(difference).toBeLessThanOrEqual(1e-4);
  });
});
