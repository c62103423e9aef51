/**
 * The doodle decoder draws its strokes as bright ridges over a grey haze (a VAE's uncertainty about
 * where the stroke goes). An unsharp mask at the model's own resolution lifts the ridges above
 * the haze, `p + amount * (p - gaussian(p, sigma))`, so one threshold then finds faint strokes
 * (a key's teeth) without filling hazy areas (an owl's body).
 */
import { FloatMap } from "./resample-map.js";

export interface StrokeEmphasis {
  /** Gaussian radius of the local average, in model pixels. */
  sigma: number;
  /** How far a sample is pushed away from its local average; 0 leaves the map as it is. */
  amount: number;
}

function gaussianKernel(sigma: number): Float32Array {
  const radius = Math.ceil(3 * sigma);
  const kernel = new Float32Array(2 * radius + 1);
  let sum = 0;
  for (let i = -radius; i <= radius; i++) {
    const weight = Math.exp(-(i * i) / (2 * sigma * sigma));
    kernel[i + radius] = weight;
    sum += weight;
  }
  for (let i = 0; i < kernel.length; i++) kernel[i]! /= sum;
  return kernel;
}

/** `value` clamped to 0..size-1: outside the map the edge samples repeat. */
function clampIndex(value: number, size: number): number {
  return value < 0 ? 0 : value >= size ? size - 1 : value;
}

/** Row `y` of `data` blurred along the row by `kernel` (odd length), into the same row of `out`. */
function blurRow(data: Float32Array, width: number, y: number, kernel: Float32Array, out: Float32Array): void {
  const radius = (kernel.length - 1) / 2;
  for (let x = 0; x < width; x++) {
    let value = 0;
    for (let i = -radius; i <= radius; i++) value += kernel[i + radius]! * data[y * width + clampIndex(x + i, width)]!;
    out[y * width + x] = value;
  }
}

/** Row `y` of `data` blurred along the columns by `kernel` (odd length), into the same row of `out`. */
function blurAcrossRows(data: Float32Array, width: number, height: number, y: number, kernel: Float32Array, out: Float32Array): void {
  const radius = (kernel.length - 1) / 2;
  for (let x = 0; x < width; x++) {
    let value = 0;
    for (let i = -radius; i <= radius; i++) value += kernel[i + radius]! * data[clampIndex(y + i, height) * width + x]!;
    out[y * width + x] = value;
  }
}

/** Separable Gaussian blur; outside the map the edge samples repeat. */
export function gaussianBlur(map: FloatMap, sigma: number): FloatMap {
  const { data, width, height } = map;
  const kernel = gaussianKernel(sigma);
  const rows = new Float32Array(width * height);
  for (let y = 0; y < height; y++) blurRow(data, width, y, kernel, rows);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) blurAcrossRows(rows, width, height, y, kernel, out);
  return new FloatMap(out, width, height);
}

export function emphasiseStrokes(map: FloatMap, emphasis: StrokeEmphasis): FloatMap {
  if (emphasis.amount === 0) return map;
  const average = gaussianBlur(map, emphasis.sigma);
  const data = new Float32Array(map.data.length);
  for (let i = 0; i < data.length; i++) data[i] = map.data[i]! + emphasis.amount * (map.data[i]! - average.data[i]!);
  return new FloatMap(data, map.width, map.height);
}
