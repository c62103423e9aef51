/**
 * An image graph with its input's height and width left open, for trying a network at another input
 * side than the one it was exported at (bench/background.ts, "ISNet beyond the arena"). Only the
 * declared shapes change: whether the graph really runs at another side depends on how its exporter
 * wrote its resizes, and onnxruntime says so when it does not.
 */
import onnxProto from "onnx-proto";

// onnx-proto is CommonJS; under Node ESM its exports arrive as the default import.
const { onnx } = onnxProto;

/** `bytes` with the spatial axes of its first input symbolic (`layout` says where they are) and its outputs' shapes undeclared. */
export function openSpatialAxes(bytes: Uint8Array, layout: "NCHW" | "NHWC"): Uint8Array {
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph;
  const dims = graph?.input?.[0]?.type?.tensorType?.shape?.dim;
  if (!graph || !dims || dims.length !== 4) throw new Error("Expected a graph whose first input has four axes.");
  const [heightAxis, widthAxis] = layout === "NHWC" ? [1, 2] : [2, 3];
  dims[heightAxis] = onnx.TensorShapeProto.Dimension.create({ dimParam: "height" });
  dims[widthAxis] = onnx.TensorShapeProto.Dimension.create({ dimParam: "width" });
  for (const output of graph.output ?? []) if (output.type?.tensorType) output.type.tensorType.shape = null;
  // Shapes the exporter inferred at its own side would contradict the new ones.
  graph.valueInfo = [];
  return onnx.ModelProto.encode(model).finish();
}
