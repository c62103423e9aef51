/**
 * The resolution a style is painted at, and the tiles that painting is split into.
 *
 * Tiles are balanced: the fewest tiles that fit the tile limit, all of about the same size. The
 * networks normalise each tile by its own statistics (instance norm), so a sliver of a last tile
 * (a 1000 px row cut into 512 + 488… + 40) would be painted noticeably differently from its
 * neighbours; even tiles keep every tile's statistics close to the whole image's.
 */
import type { InferenceGeometry } from "../../models/catalog/catalog-types.js";

export interface Size {
  width: number;
  height: number;
}

/**
 * The size an image of `source` is painted at: unchanged when its longest side is at most
 * `workingSize`, else scaled down (aspect ratio kept, rounded) so the longest side is `workingSize`.
 */
export function workingSizeFor(source: Size, workingSize: number): Size {
  const longest = Math.max(source.width, source.height);
  if (longest <= workingSize) return { width: source.width, height: source.height };
  const scale = workingSize / longest;
  return {
    width: Math.max(1, Math.round(source.width * scale)),
    height: Math.max(1, Math.round(source.height * scale)),
  };
}

/**
 * The tiling for painting an image of `size` with a network of `geometry` (its size multiple and
 * tile overlap): one tile when the longest side fits `maxTile`, else the smallest tile side (a
 * multiple of the network's size multiple, at most `maxTile`) that needs no more tiles along either
 * axis than `maxTile` would.
 */
export function balancedTiling(size: Size, geometry: InferenceGeometry, maxTile: number): InferenceGeometry {
  const multiple = geometry.sizeMultiple ?? 1;
  const overlap = geometry.tileOverlap ?? 0;
  const limit = Math.max(multiple, Math.floor(maxTile / multiple) * multiple);
  if (Math.max(size.width, size.height) <= limit) return { sizeMultiple: multiple };
  // Never more than half a tile, as tile-grid.ts requires.
  const sharedPixels = Math.min(overlap, Math.floor(limit / 2));
  const needed = (length: number) => {
    if (length <= limit) return length;
    const tiles = Math.ceil((length - sharedPixels) / (limit - sharedPixels));
    return Math.ceil((length - sharedPixels) / tiles) + sharedPixels;
  };
  const tile = Math.min(limit, Math.ceil(Math.max(needed(size.width), needed(size.height)) / multiple) * multiple);
  return { sizeMultiple: multiple, tileSize: tile, tileOverlap: Math.min(sharedPixels, Math.floor(tile / 2)) };
}
