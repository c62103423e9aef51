/**
 * Exact Euclidean distance from every pixel to the nearest set pixel (Felzenszwalb & Huttenlocher,
 * "Distance Transforms of Sampled Functions", 2012): two passes of the 1-D squared-distance
 * transform, linear in the pixel count. A pen of radius r drawn along the stroke lines is then
 * "distance < r", and the distance also gives the anti-aliased edge.
 */
import type { BitMap } from "./stroke-skeleton.js";
import { FloatMap } from "./resample-map.js";

/** Stands for "no set pixel on this line" (squared distance). */
const FAR = 1e20;

/** Where the parabolas rooted at `q` and `v` over `f` intersect. */
function intersection(f: Float64Array, q: number, v: number): number {
  return (f[q]! + q * q - (f[v]! + v * v)) / (2 * q - 2 * v);
}

/** 1-D squared distance transform of `f` (length `n`) into `out`. */
function transformLine(f: Float64Array, n: number, out: Float64Array, hull: Int32Array, bounds: Float64Array): void {
  let k = 0;
  hull[0] = 0;
  bounds[0] = -Infinity;
  bounds[1] = Infinity;
  for (let q = 1; q < n; q++) {
    let s = intersection(f, q, hull[k]!);
    while (s <= bounds[k]!) {
      k--;
      s = intersection(f, q, hull[k]!);
    }
    k++;
    hull[k] = q;
    bounds[k] = s;
    bounds[k + 1] = Infinity;
  }
  k = 0;
  for (let q = 0; q < n; q++) {
    while (bounds[k + 1]! < q) k++;
    const v = hull[k]!;
    out[q] = (q - v) * (q - v) + f[v]!;
  }
}

/** Scratch lines for the 1-D transforms of a map whose longest side is `longest`. */
interface LineBuffers {
  line: Float64Array;
  out: Float64Array;
  hull: Int32Array;
  bounds: Float64Array;
}

/** The first pass, column `x`: squared distance along it to the set pixels of `data` in it, into `squared`. */
function transformColumn(data: Uint8Array, width: number, height: number, x: number, buffers: LineBuffers, squared: Float64Array): void {
  const { line, out, hull, bounds } = buffers;
  for (let y = 0; y < height; y++) line[y] = data[y * width + x] === 1 ? 0 : FAR;
  transformLine(line, height, out, hull, bounds);
  for (let y = 0; y < height; y++) squared[y * width + x] = out[y]!;
}

/** The second pass, row `y` of the first pass's `squared`: the distance itself, into `distance`. */
function transformRow(squared: Float64Array, width: number, y: number, buffers: LineBuffers, distance: Float32Array): void {
  const { line, out, hull, bounds } = buffers;
  for (let x = 0; x < width; x++) line[x] = squared[y * width + x]!;
  transformLine(line, width, out, hull, bounds);
  for (let x = 0; x < width; x++) distance[y * width + x] = Math.sqrt(out[x]!);
}

/** Distance in pixels to the nearest set pixel; very large everywhere when none is set. */
export function distanceField(bits: BitMap): FloatMap {
  const { data, width, height } = bits;
  const longest = Math.max(width, height);
  const buffers: LineBuffers = {
    line: new Float64Array(longest),
    out: new Float64Array(longest),
    hull: new Int32Array(longest),
    bounds: new Float64Array(longest + 1),
  };
  const squared = new Float64Array(width * height);
  for (let x = 0; x < width; x++) transformColumn(data, width, height, x, buffers, squared);
  const distance = new Float32Array(width * height);
  for (let y = 0; y < height; y++) transformRow(squared, width, y, buffers, distance);
  return new FloatMap(distance, width, height);
}
