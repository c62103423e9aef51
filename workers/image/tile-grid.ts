/**
 * Where tiles go along one axis, and how much each contributes where tiles overlap.
 *
 * Tiles start every `tile - overlap` pixels, so every overlap is exactly `overlap` wide and, with
 * `overlap <= tile / 2`, no pixel is covered by more than two tiles along an axis. The last tile is
 * cut at the image edge and padded back up to the size the network needs (the fixed size, or the next
 * size multiple). Pulling the last tile back inside the image instead would avoid the padding but make
 * its overlap irregular and let three tiles cover one pixel, which the streaming assembly in tiling.ts
 * relies on never happening.
 */
import { AtelierError } from "../../core/errors.js";

export interface AxisTile {
  /** First input pixel covered. */
  start: number;
  /** Input pixels of the image inside the tile. */
  length: number;
  /** Input pixels the network sees: `length` plus padding past the image edge. */
  padded: number;
  /** Input pixels shared with the previous tile (0 for the first). */
  overlapBefore: number;
  /** Input pixels shared with the next tile (0 for the last). */
  overlapAfter: number;
}

export interface AxisPlanOptions {
  /** Tile length in input pixels; undefined means one tile for the whole axis (dynamic networks only). */
  tile: number | undefined;
  /** Input pixels shared by neighbouring tiles, 0 to `tile / 2`. */
  overlap: number;
  /** Every padded tile length is a multiple of this (1 for none). */
  multiple: number;
  /** The network takes exactly `tile` pixels: every tile is padded to it, even one larger than the image. */
  fixed: boolean;
}

const roundUp = (value: number, multiple: number) => Math.ceil(value / multiple) * multiple;

/** Tiles covering `size` input pixels, in order. */
export function planAxis(size: number, options: AxisPlanOptions): AxisTile[] {
  const { overlap, multiple, fixed } = options;
  const tile = options.tile === undefined ? Infinity : fixed ? options.tile : Math.max(multiple, Math.floor(options.tile / multiple) * multiple);
  const padded = (length: number) => (fixed ? tile : roundUp(length, multiple));
  if (size <= tile) return [{ start: 0, length: size, padded: padded(size), overlapBefore: 0, overlapAfter: 0 }];
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > Math.floor(tile / 2)) {
    throw new AtelierError("INTERNAL", `Expected integer between 0 and ${Math.floor(tile / 2)} for tile overlap (tile ${tile}) but received ${overlap}.`);
  }
  const step = tile - overlap;
  const tiles: AxisTile[] = [];
  for (let start = 0; ; start += step) {
    const length = Math.min(tile, size - start);
    tiles.push({ start, length, padded: padded(length), overlapBefore: start === 0 ? 0 : overlap, overlapAfter: 0 });
    if (start + tile >= size) break;
    tiles[tiles.length - 1]!.overlapAfter = overlap;
  }
  return tiles;
}

/**
 * Blend weight of each output pixel of `tile` (length `tile.length * scale`): 1 inside, rising linearly
 * across the overlaps. Across one overlap the two tiles' weights sum to exactly 1, so blending needs no
 * normalisation and the result is exact wherever both tiles agree.
 */
export function blendWeights(tile: AxisTile, scale: number): Float32Array {
  const length = tile.length * scale;
  const before = tile.overlapBefore * scale;
  const after = tile.overlapAfter * scale;
  const weights = new Float32Array(length);
  for (let j = 0; j < length; j++) {
    let w = 1;
    if (before > 0) w = Math.min(w, (j + 0.5) / before);
    if (after > 0) w = Math.min(w, (length - j - 0.5) / after);
    weights[j] = w;
  }
  return weights;
}

/** Maps a position past the image edge back inside it, for padding. */
export type EdgeMode = "reflect" | "replicate";

/** The input index that supplies position `index` (0 or more) on an axis of `size` pixels. */
export function edgeIndex(index: number, size: number, mode: EdgeMode): number {
  if (index < size) return index;
  if (mode === "replicate" || size === 1) return size - 1;
  // Reflection without repeating the edge pixel (…c b a b c…), periodic for pads longer than the image.
  const period = 2 * (size - 1);
  const folded = index % period;
  return folded < size ? folded : period - folded;
}
