/**
 * The nc16 style graphs, exported at a fixed 256x256, made size-independent at load: the same values
 * as the original file at 256x256, whole results at other sizes, and a loud failure on a graph that
 * does not have the expected shape.
 */
import fs from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { NC16_STYLES } from "../../models/catalog/weight-file-sets.js";
import type { ImageTensorFormat } from "../../models/catalog/catalog-types.js";
import { imageToTensor } from "../../workers/image/image-tensor.js";
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { makeStyleGraphSizeIndependent } from "../../workers/style/dynamic-style-graph.js";
import { noiseImage } from "../onnx/pixels.js";
import { hasMirrorModel, mirrorPath } from "../support/test-assets.js";

const RGB255: ImageTensorFormat = { layout: "NCHW", channelOrder: "RGB", range: [0, 255] };
const runtime = new ModelRuntime({ threads: 2, memoryBudgetBytes: 2048 * 1024 * 1024, logger: createLogger("silent") });
afterAll(() => runtime.dispose());

describe.skipIf(!hasMirrorModel("style-fast-nc16"))("nc16 graphs made size-independent", () => {
  it.each(NC16_STYLES)("%s: identical at 256x256, whole at 300x200 and 132x516", async (style) => {
    const original = await fs.readFile(mirrorPath("style-fast-nc16", `${style}_nc16_256x256_onnxjs014.onnx`));
    const { bytes, report } = makeStyleGraphSizeIndependent(original);
    expect(report.upsamplesReplaced).toBe(2);
    const fixed = runtime.model(`${style}/fixed`, async () => original);
    const open = runtime.model(`${style}/open`, async () => bytes);
    expect((await open.signature()).inputs[0]).toMatchObject({ name: "input.1", shape: [1, 3, "H", "W"] });

    const tile = imageToTensor(noiseImage(256, 256, 3, 11), RGB255);
    const [a, b] = [(await fixed.run({ "input.1": tile }))["395"]!, (await open.run({ "input.1": tile }))["395"]!];
    let largest = 0;
    for (let i = 0; i < a.data.length; i++) largest = Math.max(largest, Math.abs(a.data[i]! - b.data[i]!));
    expect(largest).toBeLessThan(1e-3);

    for (const [width, height] of [[300, 200], [132, 516]] as const) {
      const out = (await open.run({ "input.1": imageToTensor(noiseImage(width, height), RGB255) }))["395"]!;
      expect(out.dims).toEqual([1, 3, height, width]);
      expect(out.data.every(Number.isFinite)).toBe(true);
    }
  });

  it.skipIf(!hasMirrorModel("style-fast-ml5"))("refuses a graph without the ONNX.js upsampling pattern instead of guessing", async () => {
    // The ml5 network is opset 13 and upsamples with ConvTranspose; there is nothing to rewrite.
    const ml5 = await fs.readFile(mirrorPath("style-fast-ml5", "ml5-fast-style-udnie.onnx"));
    expect(() => makeStyleGraphSizeIndependent(ml5)).toThrow(/cannot be made size-independent: expected ONNX opset 9/);
  });
});
