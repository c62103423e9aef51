/**
 * UpscalerJS ESRGAN (TF.js layers models) converted to ONNX and checked against TensorFlow.js
 * running the same model.json with UpscalerJS's own custom-layer code.
 *
 * Tolerances: thick outputs 0..1, so max |ONNX − TF.js| ≤ 1e-3 directly. slim/medium output 0..255;
 * there the bound is relative to that range: max |difference| / 255 ≤ 1e-5 (i.e. ≤ 0.00255 in
 * output units), tighter than 1e-3 on a 0..1 scale.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { OnnxGraphBuilder, attr } from "../../models/convert/onnx-graph.js";
import { permuteTensor } from "../../models/convert/permute-tensor.js";
import {
  ESRGAN_SCALES,
  ESRGAN_VARIANTS,
  type EsrganScale,
  type EsrganVariant,
  convertEsrgan,
  esrganModelDir,
} from "../../models/convert/upscalerjs-esrgan.js";
import { hasTestPhotos, testPhoto } from "../support/test-assets.js";
import { maxAbsDifference, seededUniform } from "./numeric.js";
import { onnxSession, runOnnxOutput } from "./onnx-run.js";
import { photoCrop } from "./photo-crop.js";
import { loadReferenceModel, predictAll, registerUpscalerJsLayers, tf, useTfjsCpu } from "./tfjs-reference.js";

beforeAll(useTfjsCpu);

describe("PixelShuffle ↔ DepthToSpace", () => {
  it("TF depth_to_space (NHWC) equals ONNX DepthToSpace in DCR mode, not CRD", async () => {
    const [h, w, c, block] = [3, 2, 12, 2];
    const nhwc = seededUniform(7, h * w * c, -1, 1);
    const expected = (await tf.depthToSpace(tf.tensor4d(nhwc, [1, h, w, c]), block, "NHWC").data()) as Float32Array;
    const expectedNchw = permuteTensor({ shape: [1, h * block, w * block, c / (block * block)], data: expected }, [0, 3, 1, 2]).data;
    const nchw = permuteTensor({ shape: [1, h, w, c], data: nhwc }, [0, 3, 1, 2]).data;
    const differences: Record<string, number> = {};
    for (const mode of ["DCR", "CRD"]) {
      const graph = new OnnxGraphBuilder();
      graph.addInput("x", [1, c, h, w]);
      graph.addNode({ opType: "DepthToSpace", inputs: ["x"], outputs: ["y"], attributes: { blocksize: attr.int(block), mode: attr.string(mode) } });
      graph.addOutput("y", [1, c / 4, h * block, w * block]);
      const out = await runOnnxOutput(await onnxSession(graph.toBytes()), { x: { data: nchw, dims: [1, c, h, w] } }, "y");
      differences[mode] = maxAbsDifference(out.data, expectedNchw);
    }
    expect(differences.DCR).toBe(0);
    expect(differences.CRD).toBeGreaterThan(0.1);
  });
});

describe("every ESRGAN variant converts and runs", () => {
  const all = ESRGAN_VARIANTS.flatMap((variant) => ESRGAN_SCALES.map((scale) => [variant, scale] as const));
  it.each(all)("%s x%i on a random 16x16 input", async (variant, scale) => {
    const converted = await convertEsrgan(variant, scale);
    expect(converted.unusedWeights).toEqual([]);
    expect(converted.signature.inputs).toEqual([{ name: "input", elementType: "float32", dims: ["batch", 3, "height", "width"] }]);
    expect(converted.signature.outputs).toEqual([
      { name: "output", elementType: "float32", dims: ["batch", 3, `height*${scale}`, `width*${scale}`] },
    ]);
    const range = converted.esrgan.input.range[1];
    const session = await onnxSession(converted.bytes);
    const out = await runOnnxOutput(session, { input: { data: seededUniform(scale, 3 * 16 * 16, 0, range), dims: [1, 3, 16, 16] } }, "output");
    expect(out.dims).toEqual([1, 3, 16 * scale, 16 * scale]);
    expect(out.data.every(Number.isFinite)).toBe(true);
  });
});

interface ReferenceCase {
  variant: EsrganVariant;
  scale: EsrganScale;
  /**
   * Crops of chelsea.png, one square and one not where the network is cheap in TF.js; thick, which
   * pure-JS TF.js runs at tens of milliseconds per input pixel, gets one small crop that is not square.
   */
  crops: { left: number; top: number; width: number; height: number }[];
}

const REFERENCE_CASES: ReferenceCase[] = [
  { variant: "slim", scale: 2, crops: [{ left: 180, top: 60, width: 48, height: 48 }, { left: 120, top: 140, width: 40, height: 56 }] },
  { variant: "medium", scale: 3, crops: [{ left: 180, top: 60, width: 48, height: 48 }, { left: 120, top: 140, width: 40, height: 56 }] },
  { variant: "thick", scale: 4, crops: [{ left: 120, top: 140, width: 16, height: 24 }] },
];

describe.skipIf(!hasTestPhotos())("ESRGAN ONNX matches TF.js on photo crops", () => {
  // A liveness deadline, not a timing goal: TF.js runs the thick network in plain JavaScript, which
  // takes minutes when the files running beside it hold both cores.
  const REFERENCE_DEADLINE_MS = 240_000;

  describe.each(REFERENCE_CASES)("$variant x$scale", ({ variant, scale, crops }) => {
    let onnx: Awaited<ReturnType<typeof onnxSession>>;
    let reference: tf.LayersModel;
    let range: number;

    beforeAll(async () => {
      const definition = registerUpscalerJsLayers(variant, scale);
      const converted = await convertEsrgan(variant, scale);
      range = converted.esrgan.input.range[1];
      // The package's own definition and the exported signature must agree on the value range.
      expect(definition.inputRange).toEqual([...converted.esrgan.input.range]);
      onnx = await onnxSession(converted.bytes);
      reference = await loadReferenceModel(esrganModelDir(variant, scale));
    }, REFERENCE_DEADLINE_MS);

    it.each(crops)("$width x $height crop", async (region) => {
      const crop = await photoCrop(testPhoto("chelsea.png"), region, range / 255);
      const started = performance.now();
      const [expected] = await predictAll(reference, [{ data: crop.nhwc, shape: [1, crop.height, crop.width, 3] }]);
      const tfjsMs = performance.now() - started;
      const out = await runOnnxOutput(onnx, { input: { data: crop.nchw, dims: [1, 3, crop.height, crop.width] } }, "output");
      expect(out.dims).toEqual([1, 3, crop.height * scale, crop.width * scale]);
      const expectedNchw = permuteTensor({ shape: expected!.shape, data: expected!.data }, [0, 3, 1, 2]).data;
      const difference = maxAbsDifference(out.data, expectedNchw);
      const relative = difference / range;
      console.log(
        `[esrgan] ${variant} x${scale} ${crop.width}x${crop.height}: max |ONNX - TF.js| = ${difference.toExponential(3)} ` +
          `(output range 0..${range}, relative ${relative.toExponential(3)}; TF.js ${Math.round(tfjsMs)} ms)`,
      );
      if (range === 1) expect(difference).toBeLessThanOrEqual(1e-3);
      else expect(relative).toBeLessThanOrEqual(1e-5);
    }, REFERENCE_DEADLINE_MS);
  });
});
