/**
 * `preserveColors`: the painting's texture and shading with the photo's colours, by luminance-only
 * transfer (Gatys et al., "Preserving Color in Neural Artistic Style Transfer", 2016): the result
 * takes its luma from the painting and its chroma from the photo.
 *
 * In full-range BT.601 YCbCr (JPEG's), keeping Cb and Cr and replacing Y by Y' is, in RGB, adding
 * Y' - Y to each channel, which is what this does (clamping at 0 and 255 can only desaturate a little).
 * The painting's luma is first matched to the photo's mean and spread, so a style that darkens or
 * flattens everything (The Scream, Mathura) still leaves the photo's overall tones and brings texture.
 */
import { AtelierError } from "../../core/errors.js";
import { LUMA_WEIGHTS, toSample } from "../image/image-tensor.js";
import type { RawImage } from "../image/raw-image.js";

const [KR, KG, KB] = LUMA_WEIGHTS;

function lumaOf(image: RawImage): Float32Array {
  const pixels = image.width * image.height;
  const luma = new Float32Array(pixels);
  const { data } = image;
  for (let p = 0; p < pixels; p++) luma[p] = KR * data[p * 3]! + KG * data[p * 3 + 1]! + KB * data[p * 3 + 2]!;
  return luma;
}

function meanAndSpread(values: Float32Array): { mean: number; spread: number } {
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / values.length;
  let squares = 0;
  for (const v of values) squares += (v - mean) * (v - mean);
  return { mean, spread: Math.sqrt(squares / values.length) };
}

/** `original`'s colours with `painted`'s luma (matched to `original`'s mean and spread); both RGB, same size. */
export function keepOriginalColors(original: RawImage, painted: RawImage): RawImage {
  if (original.channels !== 3 || painted.channels !== 3 || original.width !== painted.width || original.height !== painted.height) {
    throw new AtelierError(
      "INTERNAL",
      `Expected two RGB images of one size but received ${original.width}x${original.height}x${original.channels} and ${painted.width}x${painted.height}x${painted.channels}.`,
    );
  }
  const source = lumaOf(original);
  const target = lumaOf(painted);
  const from = meanAndSpread(target);
  const to = meanAndSpread(source);
  // A flat painting (spread 0) has no texture to rescale; keep its luma offset only.
  const gain = from.spread > 1e-3 ? to.spread / from.spread : 1;
  const out = new Uint8Array(original.data.length);
  for (let p = 0; p < source.length; p++) {
    const shift = (target[p]! - from.mean) * gain + to.mean - source[p]!;
    for (let c = 0; c < 3; c++) out[p * 3 + c] = toSample(original.data[p * 3 + c]! + shift);
  }
  return { data: out, width: original.width, height: original.height, channels: 3 };
}
