/**
 * Tiny ONNX models with known answers, built in memory with the project's graph builder, so the
 * runtime and tiling tests need no downloaded weights.
 */
import { attr, OnnxGraphBuilder } from "../../models/convert/onnx-graph.js";

/** `y = x + constant`, input `x` of shape `[1, "n"]`; the constant tells models apart in outputs. */
export function addConstantModel(constant: number): Uint8Array {
  const graph = new OnnxGraphBuilder({ graphName: "add_constant" });
  graph.addInput("x", [1, "n"]);
  const k = graph.addScalar("k", constant);
  graph.addNode({ opType: "Add", inputs: ["x", k], outputs: ["y"] });
  graph.addOutput("y", [1, "n"]);
  return graph.toBytes();
}

/** Two inputs sharing the symbolic batch dimension: `sum = a + b`, both `["batch", 4]`. */
export function twoInputModel(): Uint8Array {
  const graph = new OnnxGraphBuilder({ graphName: "two_inputs" });
  graph.addInput("a", ["batch", 4]);
  graph.addInput("b", ["batch", 4]);
  graph.addNode({ opType: "Add", inputs: ["a", "b"], outputs: ["sum"] });
  graph.addOutput("sum", ["batch", 4]);
  return graph.toBytes();
}

/** 2x nearest-neighbour upscaler (Resize, floor): input `image` `[1, 3, "height", "width"]`. */
export function nearest2xModel(): Uint8Array {
  const graph = new OnnxGraphBuilder({ graphName: "nearest_x2" });
  graph.addInput("image", [1, 3, "height", "width"]);
  const scales = graph.addFloatInitializer("scales", [4], Float32Array.of(1, 1, 2, 2));
  graph.addNode({
    opType: "Resize",
    inputs: ["image", "", scales],
    outputs: ["upscaled"],
    attributes: {
      mode: attr.string("nearest"),
      coordinate_transformation_mode: attr.string("asymmetric"),
      nearest_mode: attr.string("floor"),
    },
  });
  graph.addOutput("upscaled", [1, 3, "height2", "width2"]);
  return graph.toBytes();
}

/** Identity over a fixed `[1, 3, size, size]` input named `tile`, like networks exported at one size. */
export function fixedIdentityModel(size: number): Uint8Array {
  const graph = new OnnxGraphBuilder({ graphName: `identity_${size}` });
  graph.addInput("tile", [1, 3, size, size]);
  graph.addNode({ opType: "Identity", inputs: ["tile"], outputs: ["same"] });
  graph.addOutput("same", [1, 3, size, size]);
  return graph.toBytes();
}

/** A deliberately slow network: `layers` 3x3 convolutions of 32 channels over `[1, 32, "h", "w"]`. */
export function slowConvModel(layers: number): Uint8Array {
  const graph = new OnnxGraphBuilder({ graphName: "slow_conv" });
  graph.addInput("x", [1, 32, "h", "w"]);
  let current = "x";
  for (let layer = 0; layer < layers; layer++) {
    const weights = graph.addFloatInitializer(`w${layer}`, [32, 32, 3, 3], new Float32Array(32 * 32 * 9).fill(1 / (32 * 9)));
    const output = layer === layers - 1 ? "y" : `c${layer}`;
    graph.addNode({ opType: "Conv", inputs: [current, weights], outputs: [output], attributes: { pads: attr.ints([1, 1, 1, 1]) } });
    current = output;
  }
  graph.addOutput("y", [1, 32, "h", "w"]);
  return graph.toBytes();
}

/**
 * A network with a large working set and small input and output: `[1, 1, "h", "w"]` is enlarged
 * `factor` times per side (Resize), shifted and scaled (two more full-size activations), then averaged
 * back to the input size. At h = w = 256 and factor 16 each activation is 64 MiB.
 */
export function wideActivationModel(factor: number): Uint8Array {
  const graph = new OnnxGraphBuilder({ graphName: "wide_activations" });
  graph.addInput("x", [1, 1, "h", "w"]);
  const scales = graph.addFloatInitializer("scales", [4], Float32Array.of(1, 1, factor, factor));
  graph.addNode({ opType: "Resize", inputs: ["x", "", scales], outputs: ["wide"], attributes: { mode: attr.string("nearest") } });
  const shifted = graph.op("Add", ["wide", graph.addScalar("one", 1)]);
  const scaled = graph.op("Mul", [shifted, graph.addScalar("half", 0.5)]);
  graph.addNode({
    opType: "AveragePool",
    inputs: [scaled],
    outputs: ["y"],
    attributes: { kernel_shape: attr.ints([factor, factor]), strides: attr.ints([factor, factor]) },
  });
  graph.addOutput("y", [1, 1, "h", "w"]);
  return graph.toBytes();
}
