/**
 * Latents → pixels with the export's VAE decoder: latents are divided by the scaling factor
 * (0.18215 for SD 1.x / 2.x), decoded to RGB in about [−1, 1], then mapped to 0..255 as
 * round(clamp((x + 1)/2, 0, 1)·255) with halves to even, interleaved row by row.
 */
import { AtelierError } from "../../../core/errors.js";
import type { RawImage } from "../../image/raw-image.js";
import type { DiffusionGraph } from "./diffusion-graph.js";

export const VAE_INPUT = "latent_sample";
export const VAE_OUTPUT = "sample";

export async function decodeLatents(
  graph: DiffusionGraph,
  latents: Float32Array,
  dims: [channels: number, height: number, width: number],
  scalingFactor: number,
  signal?: AbortSignal,
): Promise<RawImage> {
  const { inputs, outputs } = graph.signature;
  const input = inputs.find((value) => value.name === VAE_INPUT) ?? inputs[0];
  const output = outputs.find((value) => value.name === VAE_OUTPUT) ?? outputs[0];
  if (!input || !output || inputs.length !== 1) throw new AtelierError("INTERNAL", "The VAE decoder must take exactly one input, the latents.");
  const scaled = new Float32Array(latents.length);
  for (let i = 0; i < latents.length; i++) scaled[i] = latents[i]! / scalingFactor;
  const result = (await graph.run({ [input.name]: { data: scaled, dims: [1, ...dims] } }, signal))[output.name];
  if (!result || result.dims.length !== 4 || result.dims[0] !== 1 || result.dims[1] !== 3) {
    throw new AtelierError("INTERNAL", `The VAE decoder returned ${result ? `shape [${result.dims.join(", ")}]` : "nothing"}; expected [1, 3, height, width].`);
  }
  const [, , height, width] = result.dims as [number, number, number, number];
  const plane = width * height;
  // A clamped array clamps to 0..255 and rounds halves to even, exactly numpy's
  // (x.clip(0, 1) * 255).round() in the reference pipelines; NaN becomes 0.
  const pixels = new Uint8ClampedArray(plane * 3);
  const source = result.data;
  for (let c = 0; c < 3; c++) {
    const offset = c * plane;
    for (let p = 0, q = c; p < plane; p++, q += 3) pixels[q] = (source[offset + p]! + 1) * 127.5;
  }
  return { data: new Uint8Array(pixels.buffer), width, height, channels: 3 };
}
