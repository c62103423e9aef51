/**
 * Segmentation networks fed 8-bit pixels (predict-matte.ts, byte-image-graph.ts `withByteImageInput`):
 * where every channel is normalised alike, the graph looks the float values up itself, and the network
 * must see exactly the tensor imageToTensor would have made.
 */
import os from "node:os";
import onnxProto from "onnx-proto";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import type { ImageTensorFormat } from "../../models/catalog/catalog-types.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { withByteImageInput } from "../../workers/image/byte-image-graph.js";
import { byteInputTable, imageToTensor } from "../../workers/image/image-tensor.js";
import { ModelLoader } from "../../workers/model-loader.js";
import { ModelStore } from "../../models/store/model-store.js";
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { chooseModel } from "../../models/requests/background-model-choice.js";
import { segmentationInput, segmentationSession } from "../../workers/background/predict-matte.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, hasTestPhotos, testPhoto } from "../support/test-assets.js";

const modelsFolder = fileTempDir("test-models");

const { onnx } = onnxProto;

/** ISNet's normalisation: (v - 128) / 256 on every channel, planar. */
const ISNET_LIKE: ImageTensorFormat = { layout: "NCHW", channelOrder: "RGB", range: [0, 255], mean: [128, 128, 128], std: [256, 256, 256] };

describe("byte input tables", () => {
  it("exist where every channel maps alike, and hold imageToTensor's values", () => {
    const table = byteInputTable(ISNET_LIKE)!;
    const ramp = { data: Uint8Array.from({ length: 256 * 3 }, (_, i) => (i / 3) | 0), width: 256, height: 1, channels: 3 as const };
    const tensor = imageToTensor(ramp, ISNET_LIKE).data;
    for (let v = 0; v < 256; v++) for (let c = 0; c < 3; c++) expect(table[v]).toBe(tensor[c * 256 + v]);
    // SINet's: BGR, a mean per channel.
    expect(byteInputTable(catalogEntry("portrait-sinet")!.imageFormat!)).toBeUndefined();
    expect(byteInputTable({ ...ISNET_LIKE, mean: [128, 120, 128] })).toBeUndefined();
  });

  it("let a planar graph take interleaved bytes and see the float tensor imageToTensor makes", async () => {
    const ort = await import("onnxruntime-node");
    const value = (name: string, dims: number[]) => onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType: 1, shape: { dim: dims.map((dimValue) => ({ dimValue })) } } } });
    const identity = onnx.ModelProto.encode(
      onnx.ModelProto.create({
        irVersion: 7,
        opsetImport: [{ domain: "", version: 13 }],
        graph: { name: "g", node: [onnx.NodeProto.create({ opType: "Identity", input: ["x"], output: ["y"] })], input: [value("x", [1, 3, 4, 5])], output: [value("y", [1, 3, 4, 5])] },
      }),
    ).finish();
    const session = await ort.InferenceSession.create(withByteImageInput(identity, byteInputTable(ISNET_LIKE)!, "NCHW", "x"));
    const image = { data: Uint8Array.from({ length: 4 * 5 * 3 }, (_, i) => (i * 37) % 256), width: 5, height: 4, channels: 3 as const };
    const { y } = await session.run({ x: new ort.Tensor("uint8", image.data, [1, 4, 5, 3]) });
    expect(Array.from(y!.data as Float32Array)).toEqual(Array.from(imageToTensor(image, ISNET_LIKE).data));
  });
});

describe.skipIf(!(hasMirrorModel("portrait-seg-mediapipe-selfie") && hasTestPhotos()))("the selfie model fed bytes", () => {
  let runtime: ModelRuntime;
  let models: ModelLoader;

  beforeAll(async () => {
    models = new ModelLoader(new ModelStore(await installModels(modelsFolder, ["portrait-selfie"])), { disableNonCommercial: false });
    runtime = new ModelRuntime({ threads: os.availableParallelism(), memoryBudgetBytes: 1024 ** 3, logger: createLogger("silent") });
  });
  afterAll(async () => {
    await runtime?.dispose();
  });

  it("takes the pixels themselves and gives the float graph's matte, bit for bit", async () => {
    const model = chooseModel("portrait-selfie", models);
    const { data, info } = await sharp(testPhoto("astronaut.png")).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const rgb = { data, width: info.width, height: info.height, channels: 3 as const };
    const feeds = await segmentationInput(rgb, model);
    const input = model.entry.signature!.inputs[0]!.name;
    expect(feeds[input]!.data).toBeInstanceOf(Uint8Array);
    const output = model.entry.signature!.outputs[0]!.name;
    const bytes = (await segmentationSession(model, runtime, models).run(feeds))[output]!.data;
    // The graph as shipped, fed imageToTensor's floats of the same resized pixels.
    const resized = { data: feeds[input]!.data as Uint8Array, width: 256, height: 256, channels: 3 as const };
    const floats = (await runtime.model("selfie/float", models.graphLoader(model.entry, "default")).run({ [input]: imageToTensor(resized, model.entry.imageFormat!) }))[output]!.data;
    expect(Array.from(bytes)).toEqual(Array.from(floats));
  });
});
