/** The graph builder on tiny hand-made graphs whose results are worked out by hand. */
import onnxProto from "onnx-proto";
import { describe, expect, it } from "vitest";
import { OnnxGraphBuilder, attr, sanitizeName } from "../../models/convert/onnx-graph.js";
import { onnxSession, runOnnx, runOnnxOutput } from "./onnx-run.js";

const { onnx } = onnxProto;

/**
 * x (3×3, values 1..9) ─Conv(2×2 kernel [[1, 2], [0, -1]], bias −3)─ LeakyRelu(0.1) ─ Add(Reshape(c, [1, 1, 2, 2]))
 *
 * Conv without padding: y[i][j] = x[i][j] + 2·x[i][j+1] − x[i+1][j+1] − 3 = 2·x[i][j] − 5 (since
 * x[i][j+1] = x+1 and x[i+1][j+1] = x+4), for x = 1, 2, 4, 5 → −3, −1, 3, 5; LeakyRelu → −0.3, −0.1, 3, 5;
 * plus c = [10, 20, 30, 40] → 9.7, 19.9, 33, 45.
 */
function buildTinyGraph(): OnnxGraphBuilder {
  const graph = new OnnxGraphBuilder({ graphName: "tiny", docString: "hand-checked" });
  graph.addInput("x", ["batch", 1, 3, 3]);
  const w = graph.addFloatInitializer("w", [1, 1, 2, 2], Float32Array.of(1, 2, 0, -1));
  const b = graph.addFloatInitializer("b", [1], Float32Array.of(-3));
  const conv = graph.op("Conv", ["x", w, b], { kernel_shape: attr.ints([2, 2]), pads: attr.ints([0, 0, 0, 0]) }, "conv");
  const leaky = graph.op("LeakyRelu", [conv], { alpha: attr.float(0.1) }, "leaky");
  const [c] = graph.addNode({ opType: "Constant", inputs: [], outputs: ["c"], attributes: { value_floats: attr.floats([10, 20, 30, 40]) } });
  const shape = graph.addInt64Initializer("shape", [4], [1, 1, 2, 2]);
  const reshaped = graph.op("Reshape", [c!, shape], undefined, "c4d");
  graph.addNode({ opType: "Add", inputs: [leaky, reshaped], outputs: ["y"] });
  graph.addOutput("y", ["batch", 1, 2, 2]);
  return graph;
}

describe("OnnxGraphBuilder", () => {
  it("builds a Conv + LeakyRelu + Add graph that onnxruntime runs to the hand-computed values", async () => {
    const session = await onnxSession(buildTinyGraph().toBytes());
    const x = Float32Array.from({ length: 9 }, (_, i) => i + 1);
    const out = await runOnnxOutput(session, { x: { data: x, dims: [1, 1, 3, 3] } }, "y");
    expect(out.dims).toEqual([1, 1, 2, 2]);
    expect([...out.data].map((v) => Number(v.toFixed(5)))).toEqual([9.7, 19.9, 33, 45]);
  });

  it("keeps the batch dimension dynamic", async () => {
    const session = await onnxSession(buildTinyGraph().toBytes());
    const one = Float32Array.from({ length: 9 }, (_, i) => i + 1);
    // Second sample is all zeros: conv gives −3, LeakyRelu −0.3, plus c.
    const x = Float32Array.from([...one, ...new Array<number>(9).fill(0)]);
    const { y } = await runOnnx(session, { x: { data: x, dims: [2, 1, 3, 3] } });
    expect(y!.dims).toEqual([2, 1, 2, 2]);
    expect([...y!.data].map((v) => Number(v.toFixed(5)))).toEqual([9.7, 19.9, 33, 45, 9.7, 19.7, 29.7, 39.7]);
  });

  it("writes opset 17, IR version 8, the doc string and symbolic dims", () => {
    const model = onnx.ModelProto.decode(buildTinyGraph().toBytes());
    expect(Number(model.irVersion)).toBe(8);
    expect(model.opsetImport.map((o) => [o.domain, Number(o.version)])).toEqual([["", 17]]);
    expect(model.docString).toBe("hand-checked");
    const graph = model.graph as InstanceType<typeof onnx.GraphProto>;
    const dims = graph.input[0]!.type!.tensorType!.shape!.dim!.map((d) => d.dimParam || Number(d.dimValue));
    expect(dims).toEqual(["batch", 1, 3, 3]);
    const int64 = graph.initializer.find((t) => t.name === "shape")!;
    expect(int64.dataType).toBe(onnx.TensorProto.DataType.INT64);
    const raw = Uint8Array.from(int64.rawData!);
    expect([...new BigInt64Array(raw.buffer)]).toEqual([1n, 1n, 2n, 2n]);
  });

  it("encodes string attributes and float attributes exactly", async () => {
    const graph = new OnnxGraphBuilder();
    graph.addInput("x", [1, 4, 1, 1]);
    const d2s = graph.op("DepthToSpace", ["x"], { blocksize: attr.int(2), mode: attr.string("CRD") });
    graph.addNode({ opType: "Elu", inputs: [d2s], outputs: ["y"], attributes: { alpha: attr.float(0.5) } });
    graph.addOutput("y", [1, 1, 2, 2]);
    const out = await runOnnxOutput(await onnxSession(graph.toBytes()), { x: { data: Float32Array.of(1, -2, 3, -4), dims: [1, 4, 1, 1] } }, "y");
    // Channels 0..3 become pixels (0,0), (0,1), (1,0), (1,1); Elu(−2) = 0.5·(e^−2 − 1).
    expect(out.data[0]).toBeCloseTo(1, 6);
    expect(out.data[1]).toBeCloseTo(0.5 * (Math.exp(-2) - 1), 6);
    expect(out.data[2]).toBeCloseTo(3, 6);
    expect(out.data[3]).toBeCloseTo(0.5 * (Math.exp(-4) - 1), 6);
  });

  it("hands out unique, sanitised names", () => {
    const graph = new OnnxGraphBuilder();
    expect(graph.uniqueName("conv")).toBe("conv");
    expect(graph.uniqueName("conv")).toBe("conv_2");
    expect(graph.uniqueName("conv")).toBe("conv_3");
    expect(graph.addFloatInitializer("conv", [1], Float32Array.of(1))).toBe("conv_4");
    expect(sanitizeName("model/F_1:0 (x)")).toBe("model_F_1_0__x_");
  });

  it("keeps reserved public names for the node that claims them", () => {
    const graph = new OnnxGraphBuilder();
    graph.reserveName("output");
    graph.addInput("x", [1]);
    expect(graph.op("Relu", ["x"], undefined, "output")).toBe("output_2");
    expect(graph.addNode({ opType: "Identity", inputs: ["output_2"], outputs: ["output"] })).toEqual(["output"]);
    expect(() => graph.addNode({ opType: "Identity", inputs: ["x"], outputs: ["output"] })).toThrow(/already used/);
  });

  it("rejects inconsistent graphs", () => {
    const graph = new OnnxGraphBuilder();
    expect(() => graph.addFloatInitializer("w", [2, 2], new Float32Array(3))).toThrow(/3 values for dims \[2, 2\]/);
    graph.addInput("x", [1]);
    expect(() => graph.addInput("x", [1])).toThrow(/already used/);
    expect(() => graph.addNode({ opType: "Relu", inputs: ["x"], outputs: ["x"] })).toThrow(/already used/);
    expect(() => graph.addInt64Initializer("s", [1], [2 ** 60])).toThrow(/not a safe integer/);
    graph.addOutput("missing", [1]);
    expect(() => graph.toBytes()).toThrow(/"missing" is not produced/);
  });
});
