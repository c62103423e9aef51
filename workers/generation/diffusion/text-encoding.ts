/**
 * Token ids → CLIP hidden states with the export's text encoder. A graph with a dynamic batch
 * encodes all prompts (negative and positive) in one run; a graph exported at batch 1 runs once per
 * prompt. Results come back in the order of the ids.
 */
import { AtelierError } from "../../../core/errors.js";
import type { TensorSignature } from "../../onnx/tensor-data.js";
import type { DiffusionGraph } from "./diffusion-graph.js";

export const TEXT_INPUT = "input_ids";
export const TEXT_OUTPUT = "last_hidden_state";

export interface TextEmbeddings {
  /** One `[length, hidden]` array per prompt, in order. */
  states: Float32Array[];
  /** Tokens per prompt (77). */
  length: number;
  /** Hidden size (768 for SD 1.x, 1024 for SD 2.x). */
  hidden: number;
}

function pick(list: readonly TensorSignature[], name: string): TensorSignature {
  const found = list.find((value) => value.name === name) ?? (list.length === 1 ? list[0] : undefined);
  if (!found) throw new AtelierError("INTERNAL", `The text encoder has no "${name}" tensor (it has ${list.map((v) => `"${v.name}"`).join(", ")}).`);
  return found;
}

export async function encodeTokens(graph: DiffusionGraph, ids: readonly Int32Array[], signal?: AbortSignal): Promise<TextEmbeddings> {
  const input = pick(graph.signature.inputs, TEXT_INPUT);
  const extra = graph.signature.inputs.filter((value) => value !== input);
  if (extra.length > 0) {
    throw new AtelierError("INTERNAL", `The text encoder takes inputs this pipeline does not provide: ${extra.map((v) => `"${v.name}"`).join(", ")}.`);
  }
  const output = pick(graph.signature.outputs, TEXT_OUTPUT);
  const length = ids[0]!.length;
  const declaredLength = input.shape[1];
  if (typeof declaredLength === "number" && declaredLength !== length) {
    throw new AtelierError("INTERNAL", `The text encoder reads ${declaredLength} tokens but the tokenizer gives ${length}.`);
  }
  const fixedBatch = typeof input.shape[0] === "number" ? input.shape[0] : undefined;
  const groups: Int32Array[][] = fixedBatch === undefined ? [[...ids]] : ids.map((one) => [one]);
  if (fixedBatch !== undefined && fixedBatch !== 1) {
    throw new AtelierError("INTERNAL", `The text encoder is exported for a batch of ${fixedBatch}; only 1 or a dynamic batch is supported.`);
  }
  const states: Float32Array[] = [];
  let hidden = 0;
  for (const group of groups) {
    const data = new Float32Array(group.length * length);
    group.forEach((one, row) => data.set(one, row * length));
    const outputs = await graph.run({ [input.name]: { data, dims: [group.length, length] } }, signal);
    const result = outputs[output.name];
    if (!result || result.dims.length !== 3 || result.dims[0] !== group.length || result.dims[1] !== length) {
      throw new AtelierError("INTERNAL", `The text encoder returned ${result ? `shape [${result.dims.join(", ")}]` : "nothing"} for "${output.name}".`);
    }
    hidden = result.dims[2]!;
    const size = length * hidden;
    for (let row = 0; row < group.length; row++) states.push(result.data.slice(row * size, (row + 1) * size));
  }
  return { states, length, hidden };
}
