/**
 * Centre lines of the strokes: the smooth stroke map is thresholded into bands, the bands are
 * thinned to one-pixel lines (Zhang & Suen 1984, which keeps lines connected and ends in place),
 * and specks too short to be a stroke are dropped. Redrawing these lines with one pen width is what
 * makes the result read as a pen drawing rather than a blurry, uneven marker.
 */
import { keepShape } from "./kept-shapes.js";
import type { FloatMap } from "./resample-map.js";

/** A one-bit image, 1 = set, rows top to bottom: a class for the reason {@link FloatMap} is one. */
export class BitMap {
  constructor(
    readonly data: Uint8Array,
    readonly width: number,
    readonly height: number,
  ) {}
}
keepShape(new BitMap(new Uint8Array(1), 1, 1));

/** Row `y` of `map` thresholded into `data`. */
function thresholdRow(map: FloatMap, threshold: number, y: number, data: Uint8Array): void {
  for (let i = y * map.width; i < (y + 1) * map.width; i++) data[i] = map.data[i]! > threshold ? 1 : 0;
}

export function thresholdMap(map: FloatMap, threshold: number): BitMap {
  const data = new Uint8Array(map.data.length);
  for (let y = 0; y < map.height; y++) thresholdRow(map, threshold, y, data);
  return new BitMap(data, map.width, map.height);
}

/**
 * Row `y` of `bits` into `grid` (`bits` with a one-pixel empty border, `stride` = width + 2), and
 * the positions in `grid` of its set pixels onto `candidates`.
 */
function fillGridRow(bits: BitMap, y: number, grid: Uint8Array, stride: number, candidates: number[]): void {
  const { data, width } = bits;
  for (let x = 0; x < width; x++) {
    if (data[y * width + x] === 0) continue;
    grid[(y + 1) * stride + x + 1] = 1;
    candidates.push((y + 1) * stride + x + 1);
  }
}

/** Row `y` of the bordered `grid` back into `bits`. */
function copyGridRow(grid: Uint8Array, stride: number, y: number, bits: BitMap): void {
  const { data, width } = bits;
  for (let x = 0; x < width; x++) data[y * width + x] = grid[(y + 1) * stride + x + 1]!;
}

/**
 * One sub-iteration of Zhang & Suen (`pass` 0 or 1): the candidates that pass removes are cleared
 * from `grid`; true when any was.
 */
function thinningPass(grid: Uint8Array, stride: number, candidates: readonly number[], pass: number, removable: number[]): boolean {
  removable.length = 0;
  for (let c = 0; c < candidates.length; c++) {
    const at = candidates[c]!;
    if (grid[at] === 0) continue;
    // Neighbours clockwise from north: P2 … P9 in Zhang & Suen's notation.
    const p2 = grid[at - stride]!;
    const p3 = grid[at - stride + 1]!;
    const p4 = grid[at + 1]!;
    const p5 = grid[at + stride + 1]!;
    const p6 = grid[at + stride]!;
    const p7 = grid[at + stride - 1]!;
    const p8 = grid[at - 1]!;
    const p9 = grid[at - stride - 1]!;
    const count = p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9;
    if (count < 2 || count > 6) continue;
    const transitions =
      (p2 === 0 && p3 === 1 ? 1 : 0) + (p3 === 0 && p4 === 1 ? 1 : 0) + (p4 === 0 && p5 === 1 ? 1 : 0) + (p5 === 0 && p6 === 1 ? 1 : 0) +
      (p6 === 0 && p7 === 1 ? 1 : 0) + (p7 === 0 && p8 === 1 ? 1 : 0) + (p8 === 0 && p9 === 1 ? 1 : 0) + (p9 === 0 && p2 === 1 ? 1 : 0);
    if (transitions !== 1) continue;
    const keep = pass === 0 ? p2 * p4 * p6 !== 0 || p4 * p6 * p8 !== 0 : p2 * p4 * p8 !== 0 || p2 * p6 * p8 !== 0;
    if (!keep) removable.push(at);
  }
  for (let r = 0; r < removable.length; r++) grid[removable[r]!] = 0;
  return removable.length > 0;
}

/** Thins `bits` in place to 8-connected lines one pixel wide. */
export function thinToLines(bits: BitMap): BitMap {
  const { width, height } = bits;
  // A copy with a one-pixel empty border, so neighbour reads need no bounds checks.
  const stride = width + 2;
  const grid = new Uint8Array(stride * (height + 2));
  const candidates: number[] = [];
  for (let y = 0; y < height; y++) fillGridRow(bits, y, grid, stride, candidates);
  const removable: number[] = [];
  for (let changed = true; changed; ) {
    // Both sub-iterations run every round.
    const first = thinningPass(grid, stride, candidates, 0, removable);
    const second = thinningPass(grid, stride, candidates, 1, removable);
    changed = first || second;
  }
  for (let y = 0; y < height; y++) copyGridRow(grid, stride, y, bits);
  return bits;
}

/**
 * The 8-connected group of set pixels in `bits` around `start` (set, not yet seen) into `group`,
 * each marked in `seen`.
 */
function collectGroup(bits: BitMap, start: number, seen: Uint8Array, stack: number[], group: number[]): void {
  const { data, width, height } = bits;
  group.length = 0;
  stack.push(start);
  seen[start] = 1;
  while (stack.length > 0) {
    const index = stack.pop()!;
    group.push(index);
    const x = index % width;
    const y = (index - x) / width;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        const nx = x + dx;
        const ny = y + dy;
        if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
        const next = ny * width + nx;
        if (data[next] === 1 && seen[next] === 0) {
          seen[next] = 1;
          stack.push(next);
        }
      }
    }
  }
}

/** Clears 8-connected groups of fewer than `minPixels` set pixels, in place. */
export function dropSpecks(bits: BitMap, minPixels: number): BitMap {
  const { data } = bits;
  const seen = new Uint8Array(data.length);
  const stack: number[] = [];
  const group: number[] = [];
  for (let start = 0; start < data.length; start++) {
    if (data[start] === 0 || seen[start] === 1) continue;
    collectGroup(bits, start, seen, stack, group);
    if (group.length < minPixels) for (let g = 0; g < group.length; g++) data[group[g]!] = 0;
  }
  return bits;
}
