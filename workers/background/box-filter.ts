/**
 * Window means over float planes in O(pixels) whatever the radius: a running sum along each row, then
 * a running sum of whole rows down the image. Windows are cut at the image border and averaged over
 * the pixels they still cover, so borders are neither darkened nor padded (as in He et al.'s guided
 * filter reference code, which divides by a box-filtered plane of ones).
 *
 * Samples are interleaved (`channels` per pixel) so one pass filters every channel of a plane; both
 * passes read memory in order, which is what keeps them fast in JavaScript.
 */
import { AtelierError } from "../../core/errors.js";
import { ScratchPlane } from "./scratch-plane.js";

/** Interleaved float samples: `channels` per pixel, rows top to bottom. */
export interface FloatPlanes {
  data: Float32Array;
  width: number;
  height: number;
  channels: number;
}

/** 1 / (pixels of a window cut at the borders) along an axis of `size` pixels, per position. */
function inverseCounts(size: number, radius: number): Float64Array {
  const inverse = new Float64Array(size);
  for (let i = 0; i < size; i++) inverse[i] = 1 / (Math.min(i + radius, size - 1) - Math.max(i - radius, 0) + 1);
  return inverse;
}

/** The row pass's intermediate plane (up to 13 MB at the working resolution). */
const rowScratch = new ScratchPlane();

/**
 * The row pass of {@link boxMean} for 4 channels (the guided filter's two passes after the network),
 * the four running sums in locals (registers) rather than an array: the same additions, in the same
 * order per channel, as {@link rowMeansAny}.
 */
function rowMeans4(data: Float32Array, rowMeans: Float32Array, row: number, width: number, radius: number, across: Float64Array): void {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const preload = Math.min(radius, width);
  for (let x = 0, i = row; x < preload; x++, i += 4) {
    s0 += data[i]!;
    s1 += data[i + 1]!;
    s2 += data[i + 2]!;
    s3 += data[i + 3]!;
  }
  let x = 0;
  for (; x <= radius && x < width; x++) {
    if (x + radius < width) {
      const e = row + (x + radius) * 4;
      s0 += data[e]!;
      s1 += data[e + 1]!;
      s2 += data[e + 2]!;
      s3 += data[e + 3]!;
    }
    const inverse = across[x]!;
    const o = row + x * 4;
    rowMeans[o] = s0 * inverse;
    rowMeans[o + 1] = s1 * inverse;
    rowMeans[o + 2] = s2 * inverse;
    rowMeans[o + 3] = s3 * inverse;
  }
  const middleEnd = width - radius;
  for (let e = row + (x + radius) * 4, l = row + (x - radius - 1) * 4, o = row + x * 4; x < middleEnd; x++, e += 4, l += 4, o += 4) {
    s0 += data[e]! - data[l]!;
    s1 += data[e + 1]! - data[l + 1]!;
    s2 += data[e + 2]! - data[l + 2]!;
    s3 += data[e + 3]! - data[l + 3]!;
    const inverse = across[x]!;
    rowMeans[o] = s0 * inverse;
    rowMeans[o + 1] = s1 * inverse;
    rowMeans[o + 2] = s2 * inverse;
    rowMeans[o + 3] = s3 * inverse;
  }
  for (; x < width; x++) {
    const l = row + (x - radius - 1) * 4;
    s0 -= data[l]!;
    s1 -= data[l + 1]!;
    s2 -= data[l + 2]!;
    s3 -= data[l + 3]!;
    const inverse = across[x]!;
    const o = row + x * 4;
    rowMeans[o] = s0 * inverse;
    rowMeans[o + 1] = s1 * inverse;
    rowMeans[o + 2] = s2 * inverse;
    rowMeans[o + 3] = s3 * inverse;
  }
}

/** The row pass of {@link boxMean} for any number of channels, their running sums in `sums`. */
function rowMeansAny(data: Float32Array, rowMeans: Float32Array, row: number, width: number, channels: number, radius: number, across: Float64Array, sums: Float64Array): void {
  sums.fill(0);
  for (let x = 0, i = row; x < Math.min(radius, width); x++) for (let c = 0; c < channels; c++, i++) sums[c]! += data[i]!;
  let x = 0;
  for (; x <= radius && x < width; x++) {
    const entering = row + (x + radius) * channels;
    const enters = x + radius < width;
    const o = row + x * channels;
    const inverse = across[x]!;
    for (let c = 0; c < channels; c++) {
      if (enters) sums[c]! += data[entering + c]!;
      rowMeans[o + c] = sums[c]! * inverse;
    }
  }
  const middleEnd = width - radius;
  for (let e = row + (x + radius) * channels, l = row + (x - radius - 1) * channels, o = row + x * channels; x < middleEnd; x++, e += channels, l += channels, o += channels) {
    const inverse = across[x]!;
    for (let c = 0; c < channels; c++) {
      const sum = sums[c]! + (data[e + c]! - data[l + c]!);
      sums[c] = sum;
      rowMeans[o + c] = sum * inverse;
    }
  }
  for (; x < width; x++) {
    const l = row + (x - radius - 1) * channels;
    const o = row + x * channels;
    const inverse = across[x]!;
    for (let c = 0; c < channels; c++) {
      sums[c]! -= data[l + c]!;
      rowMeans[o + c] = sums[c]! * inverse;
    }
  }
}

/**
 * Mean of every channel over the (2r+1) x (2r+1) window around each pixel, cut at the borders.
 *
 * @param into Where to write the means (a new array by default); may be `source.data` itself, since
 *   the row pass reads the source into the scratch plane before the column pass writes anything.
 */
export function boxMean(source: FloatPlanes, radius: number, into?: Float32Array): FloatPlanes {
  const { width, height, channels, data } = source;
  if (data.length !== width * height * channels) {
    throw new AtelierError("INTERNAL", `Expected ${width * height * channels} samples for ${width}x${height}x${channels} planes but received ${data.length}.`);
  }
  if (!Number.isInteger(radius) || radius < 0) throw new AtelierError("INTERNAL", `Expected integer of at least 0 for radius but received ${radius}.`);
  const rowMeans = rowScratch.take(data.length);
  const rowLength = width * channels;
  const across = inverseCounts(width, radius);
  // Rows: the window [x - r, x + r] slides right, adding the samples entering and dropping those
  // leaving, pixel by pixel over the row's samples in order (a running sum per channel); the border
  // stretches, where the window is cut, are separate loops so the middle one has no branch.
  const sums = new Float64Array(channels);
  for (let y = 0; y < height; y++) {
    const row = y * rowLength;
    if (channels === 4) rowMeans4(data, rowMeans, row, width, radius, across);
    else rowMeansAny(data, rowMeans, row, width, channels, radius, across, sums);
  }
  // Columns: one running sum per sample of a row, moved down a row at a time (contiguous loops).
  const out = into ?? new Float32Array(data.length);
  if (out.length !== data.length) throw new AtelierError("INTERNAL", `Expected ${data.length} samples to write box means into but received ${out.length}.`);
  const columnSums = new Float64Array(rowLength);
  for (let y = 0; y < Math.min(radius, height); y++) {
    const row = y * rowLength;
    for (let i = 0; i < rowLength; i++) columnSums[i]! += rowMeans[row + i]!;
  }
  const down = inverseCounts(height, radius);
  for (let y = 0; y < height; y++) {
    const enter = y + radius;
    const leave = y - radius - 1;
    const entering = enter * rowLength;
    const leaving = leave * rowLength;
    const inverse = down[y]!;
    const row = y * rowLength;
    if (enter < height && leave >= 0) {
      for (let i = 0; i < rowLength; i++) {
        const sum = columnSums[i]! + rowMeans[entering + i]! - rowMeans[leaving + i]!;
        columnSums[i] = sum;
        out[row + i] = sum * inverse;
      }
      continue;
    }
    if (enter < height) for (let i = 0; i < rowLength; i++) columnSums[i]! += rowMeans[entering + i]!;
    if (leave >= 0) for (let i = 0; i < rowLength; i++) columnSums[i]! -= rowMeans[leaving + i]!;
    for (let i = 0; i < rowLength; i++) out[row + i] = columnSums[i]! * inverse;
  }
  return { data: out, width, height, channels };
}

/** Box radii whose three successive box means approximate a Gaussian of `sigma` (Wells 1986). */
export function gaussianBoxRadii(sigma: number): [number, number, number] {
  const ideal = Math.sqrt((12 * sigma * sigma) / 3 + 1);
  const radius = Math.max(0, Math.round((ideal - 1) / 2));
  return [radius, radius, radius];
}

/** Approximate Gaussian blur of every channel: three box means. */
export function gaussianMean(source: FloatPlanes, sigma: number): FloatPlanes {
  const [first, ...rest] = gaussianBoxRadii(sigma);
  const planes = boxMean(source, first);
  for (const radius of rest) boxMean(planes, radius, planes.data);
  return planes;
}
