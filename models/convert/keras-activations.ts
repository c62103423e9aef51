/**
 * Keras activation functions (by their serialised name) as ONNX nodes. Used both for the
 * `Activation` layer and for the `activation` option of Conv2D, Dense, etc.
 */
import { onnxAxis } from "./keras-layout.js";
import { attr, type OnnxGraphBuilder } from "./onnx-graph.js";

/** Activation names this module converts (Keras 2 / TF.js spellings). */
export const SUPPORTED_ACTIVATIONS = [
  "linear",
  "relu",
  "relu6",
  "sigmoid",
  "hard_sigmoid",
  "tanh",
  "softmax",
  "elu",
  "selu",
  "softplus",
  "softsign",
  "swish",
  "silu",
  "exponential",
] as const;

/** Normalises the forms Keras configs use: `"relu"`, `{"class_name": "relu"}`, camelCase from TF.js. */
export function activationName(raw: unknown): string {
  let name = "linear";
  if (typeof raw === "string") name = raw;
  else if (typeof raw === "object" && raw !== null && "class_name" in raw) name = String(raw.class_name);
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

/**
 * Appends the activation to `input` (an ONNX value of Keras rank `rank`) and returns the result's
 * name; `linear` adds nothing.
 */
export function emitActivation(graph: OnnxGraphBuilder, rawActivation: unknown, input: string, rank: number, outputBase: string): string {
  const name = activationName(rawActivation);
  switch (name) {
    case "linear":
      return input;
    case "relu":
      return graph.op("Relu", [input], undefined, outputBase);
    case "relu6":
      return graph.op(
        "Clip",
        [input, graph.addScalar(`${outputBase}_min`, 0), graph.addScalar(`${outputBase}_max`, 6)],
        undefined,
        outputBase,
      );
    case "sigmoid":
      return graph.op("Sigmoid", [input], undefined, outputBase);
    case "hard_sigmoid":
      // Keras 2 / TF.js define it as clip(0.2 * x + 0.5, 0, 1) (Keras 3 changed the slope to 1/6).
      return graph.op("HardSigmoid", [input], { alpha: attr.float(0.2), beta: attr.float(0.5) }, outputBase);
    case "tanh":
      return graph.op("Tanh", [input], undefined, outputBase);
    case "softmax":
      // Keras applies softmax over the last (channel) axis.
      return graph.op("Softmax", [input], { axis: attr.int(onnxAxis(-1, rank)) }, outputBase);
    case "elu":
      return graph.op("Elu", [input], { alpha: attr.float(1) }, outputBase);
    case "selu":
      return graph.op("Selu", [input], { alpha: attr.float(1.6732632423543772), gamma: attr.float(1.0507009873554805) }, outputBase);
    case "softplus":
      return graph.op("Softplus", [input], undefined, outputBase);
    case "softsign":
      return graph.op("Softsign", [input], undefined, outputBase);
    case "swish":
    case "silu":
      return graph.op("Mul", [input, graph.op("Sigmoid", [input], undefined, `${outputBase}_sigmoid`)], undefined, outputBase);
    case "exponential":
      return graph.op("Exp", [input], undefined, outputBase);
    default:
      throw new Error(`unsupported Keras activation "${name}" (supported: ${SUPPORTED_ACTIVATIONS.join(", ")})`);
  }
}
