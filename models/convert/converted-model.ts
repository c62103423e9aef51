/** The result type every converter in this folder returns. */
import type { ValueSignature } from "./onnx-graph.js";

/** The declared inputs and outputs of a converted model (dims in ONNX order, symbolic where dynamic). */
export interface OnnxModelSignature {
  inputs: ValueSignature[];
  outputs: ValueSignature[];
}

/** A converted model: serialised bytes plus what a caller needs to feed it. */
export interface ConvertedOnnxModel {
  /** The `.onnx` file contents; `InferenceSession.create(bytes)` loads them. */
  bytes: Uint8Array;
  signature: OnnxModelSignature;
  /** Also stored in the model: the I/O conventions (value range, colour order, size constraints). */
  docString: string;
  /** Source weights no layer consumed (empty for a faithful conversion). */
  unusedWeights: string[];
}
