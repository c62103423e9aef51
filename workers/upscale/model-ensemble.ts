/**
 * A model ensemble: the mean of several networks' outputs for one input. Networks of different
 * architectures err differently, so their mean is closer to the truth (in PSNR) than either alone.
 */
import { AtelierError } from "../../core/errors.js";
import type { RawImage } from "../image/raw-image.js";

/** The per-sample mean of `outputs`, rounded once; every output must have the same shape. */
export function modelEnsemble(outputs: readonly RawImage[]): RawImage {
  const [first] = outputs;
  if (!first) throw new AtelierError("INTERNAL", "Expected at least one output for a model ensemble but received none.");
  for (const output of outputs) {
    if (output.width !== first.width || output.height !== first.height || output.channels !== first.channels) {
      throw new AtelierError(
        "INTERNAL",
        `Expected model ensemble outputs of ${first.width}x${first.height}x${first.channels} but received ${output.width}x${output.height}x${output.channels}.`,
      );
    }
  }
  const data = new Uint8Array(first.data.length);
  for (let i = 0; i < data.length; i++) {
    let sum = 0;
    for (const output of outputs) sum += output.data[i]!;
    data[i] = Math.round(sum / outputs.length);
  }
  return { width: first.width, height: first.height, channels: first.channels, data };
}
