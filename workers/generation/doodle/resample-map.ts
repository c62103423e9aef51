/**
 * Resizes a one-channel float map (the doodle model's 28x28 stroke probabilities) with a separable
 * cubic kernel, in float, before anything is quantised, so the ink curve that follows sees smooth
 * contours rather than 28 steps. Pixel centres are aligned (`src = (dst + 0.5) / scale - 0.5`);
 * when shrinking, the kernel widens by the factor so it averages instead of aliasing.
 * Only + and * on fixed weights: the same input gives the same output on every platform.
 */
import { keepShape } from "./kept-shapes.js";

/**
 * A one-channel float image, rows top to bottom.
 *
 * A class rather than an object literal, so that V8 tracks its fields apart: every literal whose
 * first key is `data` shares that tracking, and when other code reassigns such a field (Node's HTTP
 * output queue does, on a service's first response), V8 throws away the optimised code of the
 * drawing loops that read these maps, which the warm-up had optimised for the first real call.
 */
export class FloatMap {
  constructor(
    readonly data: Float32Array,
    readonly width: number,
    readonly height: number,
  ) {}
}
keepShape(new FloatMap(new Float32Array(1), 1, 1));

/**
 * Cubic convolution kernels by B and C (Mitchell & Netravali 1988). Catmull-Rom (B=0, C=0.5)
 * interpolates and stays sharp; Mitchell (1/3, 1/3) is softer, with less overshoot.
 */
export const CUBIC_KERNELS = {
  "catmull-rom": { b: 0, c: 0.5 },
  mitchell: { b: 1 / 3, c: 1 / 3 },
  "b-spline": { b: 1, c: 0 },
} as const;

export type CubicKernel = keyof typeof CUBIC_KERNELS;

function cubicWeight(x: number, b: number, c: number): number {
  const t = Math.abs(x);
  if (t < 1) return ((12 - 9 * b - 6 * c) * t * t * t + (-18 + 12 * b + 6 * c) * t * t + (6 - 2 * b)) / 6;
  if (t < 2) return ((-b - 6 * c) * t * t * t + (6 * b + 30 * c) * t * t + (-12 * b - 48 * c) * t + (8 * b + 24 * c)) / 6;
  return 0;
}

interface Taps {
  /** First source index per output index (clamped sources are folded into the edge taps). */
  first: Int32Array;
  /** Taps per output index. */
  count: number;
  weights: Float32Array;
}

/** Normalised weights mapping `from` samples to `to` samples along one axis. */
function axisTaps(from: number, to: number, kernel: { b: number; c: number }): Taps {
  const scale = to / from;
  const support = 2 * Math.max(1, 1 / scale);
  const count = Math.ceil(support) * 2 + 1;
  const first = new Int32Array(to);
  const weights = new Float32Array(to * count);
  for (let out = 0; out < to; out++) {
    const centre = (out + 0.5) / scale - 0.5;
    const start = Math.floor(centre - support) + 1;
    first[out] = start;
    let sum = 0;
    for (let k = 0; k < count; k++) {
      const distance = (start + k - centre) / Math.max(1, 1 / scale);
      const weight = cubicWeight(distance, kernel.b, kernel.c);
      weights[out * count + k] = weight;
      sum += weight;
    }
    for (let k = 0; k < count; k++) weights[out * count + k]! /= sum;
  }
  return { first, count, weights };
}
keepShape(axisTaps(2, 4, CUBIC_KERNELS.mitchell));

/** `value` clamped to 0..size-1: outside the map the edge samples repeat. */
function clampIndex(value: number, size: number): number {
  return value < 0 ? 0 : value >= size ? size - 1 : value;
}

/** Row `y` of `map` resampled to `width` by `taps`, into row `y` of `out` (rows of `width`). */
function resampleRow(map: FloatMap, width: number, taps: Taps, y: number, out: Float32Array): void {
  for (let x = 0; x < width; x++) {
    let value = 0;
    const start = taps.first[x]!;
    for (let k = 0; k < taps.count; k++) {
      value += taps.weights[x * taps.count + k]! * map.data[y * map.width + clampIndex(start + k, map.width)]!;
    }
    out[y * width + x] = value;
  }
}

/** Output row `y` from the columns of `rows` (`rowCount` rows of `width`) resampled by `taps`, into `out`. */
function resampleAcrossRows(rows: Float32Array, rowCount: number, width: number, taps: Taps, y: number, out: Float32Array): void {
  const start = taps.first[y]!;
  for (let x = 0; x < width; x++) {
    let value = 0;
    for (let k = 0; k < taps.count; k++) value += taps.weights[y * taps.count + k]! * rows[clampIndex(start + k, rowCount) * width + x]!;
    out[y * width + x] = value;
  }
}

/** `map` resized to `width` x `height`; outside the map the edge samples repeat. */
export function resampleMap(map: FloatMap, width: number, height: number, kernelName: CubicKernel = "catmull-rom"): FloatMap {
  const kernel = CUBIC_KERNELS[kernelName];
  const horizontal = axisTaps(map.width, width, kernel);
  const vertical = axisTaps(map.height, height, kernel);
  // Rows first (map.height rows of `width`), then columns.
  const rows = new Float32Array(map.height * width);
  for (let y = 0; y < map.height; y++) resampleRow(map, width, horizontal, y, rows);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) resampleAcrossRows(rows, map.height, width, vertical, y, out);
  return new FloatMap(out, width, height);
}
