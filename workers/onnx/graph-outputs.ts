/**
 * Exporters often leave a training graph's extra outputs in place: ISNet's side outputs and the
 * feature maps of its decoder stages are all graph outputs, next to the one matte the service reads.
 * onnxruntime copies every graph output into a buffer of the caller's after each run and must keep
 * every tensor feeding one alive to the end of the run, so those extras cost a copy of each, their
 * transfer between threads, and memory that stays referenced until a collection finds the buffers
 * unused. Keeping only the outputs a caller reads removes all of that, with the same values.
 */
import onnxProto from "onnx-proto";

// onnx-proto is CommonJS; under Node ESM its exports arrive as the default import.
const { onnx } = onnxProto;

/** The graph `bytes` with only the outputs named in `keep` (the bytes themselves when it has no others). */
export function onlyOutputs(bytes: Uint8Array, keep: readonly string[]): Uint8Array {
  const model = onnx.ModelProto.decode(bytes);
  const outputs = model.graph?.output ?? [];
  const kept = outputs.filter((output) => keep.includes(output.name ?? ""));
  if (!model.graph || kept.length === outputs.length) return bytes;
  if (kept.length !== keep.length) throw new Error(`The graph lacks the output ${keep.find((name) => !kept.some((output) => output.name === name))}.`);
  model.graph.output = kept;
  return onnx.ModelProto.encode(model).finish();
}
