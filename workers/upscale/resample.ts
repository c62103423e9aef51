/**
 * Separable resampling of raw pixels with pixel centres aligned: output pixel `j` samples the input
 * at `(j + 0.5) / scale - 0.5`, the convention of the networks (pixel shuffle puts input pixel `k` at
 * output pixels `k*s .. k*s + s-1`) and of the bicubic reduction their training data came from.
 *
 * Why not sharp: libvips 8.18 enlarges with an interpolator (bicubic, whatever the kernel asked for)
 * that samples the input at `j / scale - 0.5`, half an output pixel off the network's grid. Colour,
 * chroma and alpha that meet a network's output must share its grid, and the classical model should
 * be the Lanczos-3 it is named after, so they are resampled here.
 *
 * Reductions widen the kernel by the factor (antialiasing); edges replicate the border pixel. Memory:
 * the output plus one horizontally resampled row per vertical tap (6 rows for Lanczos-3 enlargement).
 * The vertical pass, most of the work when enlarging, sums {@link FUSED_TAPS} rows per sweep over an
 * output row: one sweep for a Lanczos-3 enlargement, instead of one read-modify-write per tap.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { AtelierError } from "../../core/errors.js";
import { toSample } from "../image/image-tensor.js";
import { throwIfCancelled } from "../onnx/cancellation.js";
import { assertRawImage, type RawImage } from "../image/raw-image.js";

/**
 * `lanczos3`: windowed sinc, a = 3. `bicubic`: Keys' cubic convolution, a = -0.5 (Catmull-Rom).
 * `linear`: the triangle, bilinear interpolation when enlarging.
 */
export type ResampleKernel = "lanczos3" | "bicubic" | "linear";

export interface ResampleOptions {
  /**
   * For 2- and 4-channel images, weight colour by alpha while filtering (premultiplied), so the colour
   * of transparent pixels does not bleed into their visible neighbours. Default false: every channel
   * on its own, as for planes that are resampled apart from their alpha.
   */
  premultiplyAlpha?: boolean;
}

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
  linear: { radius: 1, weight: (x) => Math.max(0, 1 - Math.abs(x)) },
};

/** Rows summed per sweep of the vertical pass: the taps of a Lanczos-3 enlargement (2 x radius 3). */
const FUSED_TAPS = 6;

/**
 * Output samples between two chances for the event loop in {@link resampleAsync}: about 10 ms of work
 * on one core, short enough that gRPC keeps answering, long enough that yielding costs nothing.
 */
const SAMPLES_PER_TURN = 1 << 19;

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

/** Resamples `image` (1 to 4 channels) to exactly `width` x `height`. */
export function resample(
  image: RawImage,
  width: number,
  height: number,
  kernel: ResampleKernel = "lanczos3",
  options: ResampleOptions = {},
): RawImage {
  const bands = resampleInBands(image, width, height, kernel, options);
  for (;;) {
    const band = bands.next();
    if (band.done) return band.value;
  }
}

/**
 * {@link resample} for large images on a server: gives the event loop a turn every
 * {@link SAMPLES_PER_TURN} output samples and stops with CANCELLED there when `signal` aborts.
 */
export async function resampleAsync(
  image: RawImage,
  width: number,
  height: number,
  kernel: ResampleKernel = "lanczos3",
  options: ResampleOptions & { signal?: AbortSignal } = {},
): Promise<RawImage> {
  const bands = resampleInBands(image, width, height, kernel, options);
  for (;;) {
    throwIfCancelled(options.signal);
    const band = bands.next();
    if (band.done) return band.value;
    await nextTurn();
  }
}

/** The resampler proper: yields after each band of output rows, returns the image. */
function* resampleInBands(
  image: RawImage,
  width: number,
  height: number,
  kernel: ResampleKernel,
  options: ResampleOptions,
): Generator<void, RawImage> {
  assertRawImage(image);
  if (!Number.isInteger(width) || width < 1 || !Number.isInteger(height) || height < 1) {
    throw new AtelierError("INTERNAL", `Expected positive integer sizes for a resample but received ${width}x${height}.`);
  }
  if (width === image.width && height === image.height) return image;
  const { channels } = image;
  const premultiplied = options.premultiplyAlpha === true && (channels === 2 || channels === 4);
  const vertical = axisFilter(image.height, height, kernel);
  const rowLength = width * channels;
  const out = new Uint8Array(height * rowLength);
  const horizontal = rowResampler(image, width, kernel, premultiplied);

  // Horizontally resampled input rows still needed by a later output row, by input row index; rows no
  // longer needed are reused rather than left to the garbage collector.
  const rows = new Map<number, Float32Array>();
  const spare: Float32Array[] = [];
  const resampledRow = (y: number): Float32Array => {
    let row = rows.get(y);
    if (row) return row;
    row = spare.pop() ?? new Float32Array(rowLength);
    horizontal(y, row);
    rows.set(y, row);
    return row;
  };

  const { taps } = vertical;
  const sums = new Float32Array(rowLength);
  const rowsPerBand = Math.max(1, Math.floor(SAMPLES_PER_TURN / rowLength));
  for (let y = 0; y < height; y++) {
    const base = y * taps;
    const lowest = vertical.index[base]!;
    for (const [key, row] of rows) {
      if (key >= lowest) continue;
      rows.delete(key);
      spare.push(row);
    }
    // Sweeps of up to FUSED_TAPS rows; missing taps of the last sweep get weight 0 on a row already there.
    for (let first = 0; first < taps; first += FUSED_TAPS) {
      const rowsOfSweep: Float32Array[] = [];
      const weights: number[] = [];
      for (let k = first; k < first + FUSED_TAPS; k++) {
        rowsOfSweep.push(resampledRow(vertical.index[base + Math.min(k, taps - 1)]!));
        weights.push(k < taps ? vertical.weight[base + k]! : 0);
      }
      const [r0, r1, r2, r3, r4, r5] = rowsOfSweep as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array];
      const [w0, w1, w2, w3, w4, w5] = weights as [number, number, number, number, number, number];
      // The first sweep starts the sums, later ones add to them.
      const carry = first > 0 ? 1 : 0;
      for (let i = 0; i < rowLength; i++) {
        sums[i] = carry * sums[i]! + w0 * r0[i]! + w1 * r1[i]! + w2 * r2[i]! + w3 * r3[i]! + w4 * r4[i]! + w5 * r5[i]!;
      }
    }
    writeRow(sums, out, y * rowLength, channels, premultiplied);
    if ((y + 1) % rowsPerBand === 0 && y + 1 < height) yield;
  }
  return { data: out, width, height, channels };
}

/**
 * A function that resamples input row `y` horizontally into `row` (`width * channels` floats). With
 * `premultiplied`, colour comes out weighted by alpha (0..255 x 0..255) and alpha as is.
 *
 * One pass over the taps per output pixel with a sum per channel (up to four, unused ones skipped):
 * about twice as fast as a pass per channel, which re-reads every tap's weight and offset.
 */
function rowResampler(image: RawImage, width: number, kernel: ResampleKernel, premultiplied: boolean): (y: number, row: Float32Array) => void {
  const { channels, data } = image;
  const { taps, index, weight } = axisFilter(image.width, width, kernel);
  // Sample offset of each tap's pixel within an input row.
  const offset = Int32Array.from(index, (i) => i * channels);
  const stride = image.width * channels;
  const [has1, has2, has3] = [channels > 1, channels > 2, channels > 3];
  if (!premultiplied) {
    return (y, row) => {
      const from = y * stride;
      for (let x = 0, t = 0, to = 0; x < width; x++, to += channels) {
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        for (const end = t + taps; t < end; t++) {
          const w = weight[t]!;
          const at = from + offset[t]!;
          s0 += w * data[at]!;
          if (has1) s1 += w * data[at + 1]!;
          if (has2) s2 += w * data[at + 2]!;
          if (has3) s3 += w * data[at + 3]!;
        }
        row[to] = s0;
        if (has1) row[to + 1] = s1;
        if (has2) row[to + 2] = s2;
        if (has3) row[to + 3] = s3;
      }
    };
  }
  // Grey + alpha or RGB + alpha: alpha is the last channel.
  const colour = channels === 4;
  return (y, row) => {
    const from = y * stride;
    for (let x = 0, t = 0, to = 0; x < width; x++, to += channels) {
      let alpha = 0;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      for (const end = t + taps; t < end; t++) {
        const at = from + offset[t]!;
        // The tap's weight times its pixel's alpha: the share of that pixel's colour in the sum.
        const w = weight[t]! * data[at + channels - 1]!;
        alpha += w;
        s0 += w * data[at]!;
        if (colour) {
          s1 += w * data[at + 1]!;
          s2 += w * data[at + 2]!;
        }
      }
      row[to] = s0;
      if (colour) {
        row[to + 1] = s1;
        row[to + 2] = s2;
      }
      row[to + channels - 1] = alpha;
    }
  };
}

/** Rounds one finished output row into `out`; premultiplied colour is divided by its alpha first. */
function writeRow(sums: Float32Array, out: Uint8Array, to: number, channels: number, premultiplied: boolean): void {
  if (!premultiplied) {
    for (let i = 0; i < sums.length; i++) out[to + i] = toSample(sums[i]!);
    return;
  }
  const colours = channels - 1;
  for (let i = 0; i < sums.length; i += channels) {
    const alpha = sums[i + colours]!;
    const rounded = toSample(alpha);
    out[to + i + colours] = rounded;
    // A pixel that comes out fully transparent shows no colour: 0, as libvips leaves it.
    for (let c = 0; c < colours; c++) out[to + i + c] = rounded > 0 ? toSample(sums[i + c]! / alpha) : 0;
  }
}
