/**
 * Geometric self-ensemble (Lim et al., EDSR, 2017): the network runs on the eight flips and rotations
 * of the image, each output is turned back, and the eight are averaged. A network's errors differ
 * between orientations (its filters are not symmetric), so the mean is closer to the truth; it costs
 * eight runs. bench/upscale-bench.ts measures what it gains per model and factor.
 */
import type { RawImage } from "../image/raw-image.js";

/** The eight orientations: bit 0 mirrors left-right, bit 1 mirrors top-bottom, bit 2 then swaps the axes. */
export const ORIENTATIONS = [0, 1, 2, 3, 4, 5, 6, 7] as const;

/**
 * `image` in orientation `k` (forward), or an image made in orientation `k` turned back (inverse).
 * Forward mirrors first and transposes after; the inverse transposes first and mirrors after.
 */
export function orient(image: RawImage, k: number, inverse = false): RawImage {
  const { width, height, channels, data } = image;
  const transpose = (k & 4) !== 0;
  const outWidth = transpose ? height : width;
  const outHeight = transpose ? width : height;
  const mirrorX = (k & 1) !== 0;
  const mirrorY = (k & 2) !== 0;
  const out = new Uint8Array(data.length);
  for (let y = 0; y < outHeight; y++) {
    for (let x = 0; x < outWidth; x++) {
      let sourceX: number;
      let sourceY: number;
      if (inverse) {
        // `image` is the oriented one: undo the transpose, then the mirrors.
        const mx = mirrorX ? outWidth - 1 - x : x;
        const my = mirrorY ? outHeight - 1 - y : y;
        sourceX = transpose ? my : mx;
        sourceY = transpose ? mx : my;
      } else {
        const tx = transpose ? y : x;
        const ty = transpose ? x : y;
        sourceX = mirrorX ? width - 1 - tx : tx;
        sourceY = mirrorY ? height - 1 - ty : ty;
      }
      const from = (sourceY * width + sourceX) * channels;
      const to = (y * outWidth + x) * channels;
      for (let c = 0; c < channels; c++) out[to + c] = data[from + c]!;
    }
  }
  return { data: out, width: outWidth, height: outHeight, channels };
}

/**
 * The mean of `run` over the eight orientations of `image`, each output turned back; sums are kept
 * unrounded and rounded once. `run` must map an image to one of the same channels, scaled alike on
 * both sides.
 */
export async function selfEnsemble(image: RawImage, run: (oriented: RawImage) => Promise<RawImage>): Promise<RawImage> {
  let sum: Float32Array | undefined;
  let shape: Omit<RawImage, "data"> | undefined;
  for (const k of ORIENTATIONS) {
    const output = orient(await run(orient(image, k)), k, true);
    sum ??= new Float32Array(output.data.length);
    shape ??= { width: output.width, height: output.height, channels: output.channels };
    for (let i = 0; i < sum.length; i++) sum[i]! += output.data[i]!;
  }
  const data = new Uint8Array(sum!.length);
  for (let i = 0; i < data.length; i++) data[i] = Math.round(sum![i]! / ORIENTATIONS.length);
  return { ...shape!, data };
}
