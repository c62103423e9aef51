/**
 * Separable resampling of raw pixels with pixel centres aligned: output pixel `j` samples the input
 * at `(j + 0.5) / scale - 0.5`, the convention of the networks (pixel shuffle puts input pixel `k` at
 * output pixels `k*s .. k*s + s-1`) and of the bicubic reduction their training data came from.
 *
 * Why not sharp: libvips 8.18 enlarges with an interpolator (bicubic, whatever the kernel asked for)
 * that samples the input at `j / scale - 0.5`, half an output pixel off the network's grid. Colour,
 * chroma and alpha that meet a network's output must share its grid, so they are resampled here.
 *
 * Reductions widen the kernel by the factor (antialiasing); edges replicate the border pixel. Memory:
 * the output plus one horizontally resampled row per vertical tap (6 rows for Lanczos-3 enlargement).
 */
import { AtelierError } from "../../core/errors.js";
import { toSample } from "../image/image-tensor.js";
import { assertRawImage, type RawImage } from "../image/raw-image.js";

/** `lanczos3`: windowed sinc, a = 3. `bicubic`: Keys' cubic convolution, a = -0.5 (Catmull-Rom). */
export type ResampleKernel = "lanczos3" | "bicubic";

const KERNELS: Record<ResampleKernel, { radius: number; weight: (x: number) => number }> = {
  lanczos3: {
    radius: 3,
    weight: (x) => {
      const t = Math.abs(x);
      if (t < 1e-7) return 1;
      if (t >= 3) return 0;
      const pt = Math.PI * t;
      return (3 * Math.sin(pt) * Math.sin(pt / 3)) / (pt * pt);
    },
  },
  bicubic: {
    radius: 2,
    weight: (x) => {
      const t = Math.abs(x);
      const a = -0.5;
      if (t <= 1) return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1;
      if (t < 2) return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a;
      return 0;
    },
  },
};

/** For each output position along one axis: `taps` input indices (edge-clamped) and normalised weights. */
interface AxisFilter {
  taps: number;
  index: Int32Array;
  weight: Float32Array;
}

function axisFilter(inSize: number, outSize: number, kernel: ResampleKernel): AxisFilter {
  const { radius, weight } = KERNELS[kernel];
  const scale = outSize / inSize;
  // Reducing: stretch the kernel over 1/scale input pixels so it also low-passes.
  const stretch = Math.min(1, scale);
  const support = radius / stretch;
  const taps = Math.ceil(2 * support);
  const index = new Int32Array(outSize * taps);
  const weights = new Float32Array(outSize * taps);
  for (let j = 0; j < outSize; j++) {
    const centre = (j + 0.5) / scale - 0.5;
    const first = Math.floor(centre - support) + 1;
    let sum = 0;
    for (let k = 0; k < taps; k++) {
      const w = weight((first + k - centre) * stretch);
      weights[j * taps + k] = w;
      index[j * taps + k] = Math.min(inSize - 1, Math.max(0, first + k));
      sum += w;
    }
    for (let k = 0; k < taps; k++) weights[j * taps + k]! /= sum;
  }
  return { taps, index, weight: weights };
}

/** Resamples `image` (1 to 4 channels, each independently) to exactly `width` x `height`. */
export function resample(image: RawImage, width: number, height: number, kernel: ResampleKernel = "lanczos3"): RawImage {
  assertRawImage(image);
  if (!Number.isInteger(width) || width < 1 || !Number.isInteger(height) || height < 1) {
    throw new AtelierError("INTERNAL", `Expected positive integer sizes for a resample but received ${width}x${height}.`);
  }
  if (width === image.width && height === image.height) return image;
  const { channels, data } = image;
  const horizontal = axisFilter(image.width, width, kernel);
  const vertical = axisFilter(image.height, height, kernel);
  const rowLength = width * channels;
  const out = new Uint8Array(height * rowLength);

  // Horizontally resampled input rows still needed by a later output row, by input row index.
  const rows = new Map<number, Float32Array>();
  const resampledRow = (y: number): Float32Array => {
    let row = rows.get(y);
    if (row) return row;
    row = new Float32Array(rowLength);
    const from = y * image.width * channels;
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        let sum = 0;
        for (let k = 0; k < horizontal.taps; k++) {
          const t = x * horizontal.taps + k;
          sum += horizontal.weight[t]! * data[from + horizontal.index[t]! * channels + c]!;
        }
        row[x * channels + c] = sum;
      }
    }
    rows.set(y, row);
    return row;
  };

  const sums = new Float32Array(rowLength);
  for (let y = 0; y < height; y++) {
    const base = y * vertical.taps;
    const lowest = vertical.index[base]!;
    for (const key of rows.keys()) if (key < lowest) rows.delete(key);
    sums.fill(0);
    for (let k = 0; k < vertical.taps; k++) {
      const w = vertical.weight[base + k]!;
      if (w === 0) continue;
      const row = resampledRow(vertical.index[base + k]!);
      for (let i = 0; i < rowLength; i++) sums[i]! += w * row[i]!;
    }
    const to = y * rowLength;
    for (let i = 0; i < rowLength; i++) out[to + i] = toSample(sums[i]!);
  }
  return { data: out, width, height, channels };
}
