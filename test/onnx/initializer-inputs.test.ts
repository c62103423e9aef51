/**
 * Weights an old exporter listed as graph inputs, made constants (initializer-inputs.ts): the SINet
 * portrait graph as shipped against the same graph with its weights out of the input list, on a real
 * photo, through the service's runtime; and the rewrite itself on a graph built here.
 */
import os from "node:os";
import onnxProto from "onnx-proto";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { imageToTensor } from "../../workers/image/image-tensor.js";
import { ModelLoader } from "../../workers/model-loader.js";
import { ModelStore } from "../../models/store/model-store.js";
import { initializersAsConstants } from "../../workers/onnx/initializer-inputs.js";
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, hasTestPhotos, testPhoto } from "../support/test-assets.js";

const modelsFolder = fileTempDir("test-models");

const { onnx } = onnxProto;

function graphInputs(bytes: Uint8Array): string[] {
  return (onnx.ModelProto.decode(bytes).graph?.input ?? []).map((input) => input.name ?? "");
}

describe("initializersAsConstants", () => {
  it("drops the initializers from the graph's inputs and keeps the real inputs", () => {
    const tensor = (name: string) => onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 1 }] } } } });
    const model = onnx.ModelProto.create({
      irVersion: 6,
      opsetImport: [{ domain: "", version: 12 }],
      graph: {
        name: "g",
        node: [onnx.NodeProto.create({ opType: "Add", input: ["x", "w"], output: ["y"] })],
        input: [tensor("x"), tensor("w")],
        output: [tensor("y")],
        initializer: [onnx.TensorProto.create({ name: "w", dataType: 1, dims: [1], floatData: [2] })],
      },
    });
    const bytes = onnx.ModelProto.encode(model).finish();
    const rewritten = initializersAsConstants(bytes);
    expect(graphInputs(rewritten)).toEqual(["x"]);
    expect(onnx.ModelProto.decode(rewritten).graph?.initializer?.map((t) => t.name)).toEqual(["w"]);
    // A graph without such inputs comes back as it was.
    expect(initializersAsConstants(rewritten)).toBe(rewritten);
  });
});

describe.skipIf(!(hasMirrorModel("portrait-seg-sinet") && hasTestPhotos()))("the SINet portrait graph with constant weights", () => {
  let runtime: ModelRuntime;
  let models: ModelLoader;

  beforeAll(async () => {
    models = new ModelLoader(new ModelStore(await installModels(modelsFolder, ["portrait-sinet"])), { disableNonCommercial: false });
    runtime = new ModelRuntime({ threads: os.availableParallelism(), memoryBudgetBytes: 1024 ** 3, logger: createLogger("silent") });
  });
  afterAll(async () => {
    await runtime?.dispose();
  });

  it("lists only the image as input and gives the shipped graph's matte (BatchNormalization folded: float rounding only)", async () => {
    const entry = catalogEntry("portrait-sinet")!;
    const load = models.graphLoader(entry, "default");
    const shipped = await load();
    expect(graphInputs(shipped).length).toBeGreaterThan(300);
    expect(graphInputs(initializersAsConstants(shipped))).toEqual([entry.signature!.inputs[0]!.name]);
    const { data, info } = await sharp(testPhoto("astronaut.png")).resize(320, 320, { fit: "fill" }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const feeds = { [entry.signature!.inputs[0]!.name]: imageToTensor({ data, width: info.width, height: info.height, channels: 3 }, entry.imageFormat!) };
    const output = entry.signature!.outputs[0]!.name;
    const run = async (key: string, bytes: () => Promise<Uint8Array>) => (await runtime.model(key, bytes).run(feeds))[output]!.data;
    const before = await run("sinet/shipped", load);
    const after = await run("sinet/constants", async () => initializersAsConstants(await load()));
    expect(after.length).toBe(before.length);
    let worst = 0;
    for (let i = 0; i < before.length; i++) worst = Math.max(worst, Math.abs(after[i]! - before[i]!));
    expect(worst).toBeLessThan(1e-4);
  });
});
