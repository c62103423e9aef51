/**
 * Runs one upscaling network at one of its native factors over an image of any size: the catalog
 * entry says how pixels become tensors (range, layout, channels) and how large a tile may be (smaller
 * here when a large factor would make one tile's activations too big); tiles overlap and are blended
 * (workers/image/tiling.ts), so memory stays at the output plus one tile and no seam shows. The
 * session stays pinned for the whole image, and the caller's signal is checked between tiles, so a
 * cancelled call stops after the tile that is running.
 */
import { AtelierError } from "../../core/errors.js";
import type { CatalogEntry, InferenceGeometry } from "../../models/catalog/catalog-types.js";
import type { RawImage } from "../image/raw-image.js";
import { runImageNetwork } from "../image/image-network.js";
import { sessionSettings } from "../onnx/session-settings.js";
import type { WorkerContext } from "../worker-context.js";

export type NetworkDependencies = Pick<WorkerContext, "runtime" | "models">;

/** Activation memory per output pixel of a tile for models whose catalog entry has no measured figure. */
const DEFAULT_BYTES_PER_OUTPUT_PIXEL = 512;

/**
 * Largest activation memory one tile may keep, in bytes. The catalog's tile side suits x2 to x4; at x8
 * an ESRGAN tile of 192 px would keep over 2 GB, so the tile shrinks until it fits (about 90 px).
 */
export const MAX_TILE_WORKING_BYTES = 512 * 1024 * 1024;

function workingBytes(entry: CatalogEntry, scale: number, width: number, height: number): number {
  const perPixel = entry.measured?.tileBytesPerOutputPixel?.[scale] ?? DEFAULT_BYTES_PER_OUTPUT_PIXEL;
  return width * height * scale * scale * perPixel;
}

/** The catalog's tiling for `entry`, with the tile side reduced so one tile stays under {@link MAX_TILE_WORKING_BYTES}. */
export function tileGeometry(entry: CatalogEntry, scale: number): InferenceGeometry {
  const geometry = entry.geometry ?? {};
  if (geometry.fixedSize || geometry.tileSize === undefined) return geometry;
  let side = geometry.tileSize;
  const smallest = 2 * (geometry.tileOverlap ?? 0) + 16;
  while (side > smallest && workingBytes(entry, scale, side, side) > MAX_TILE_WORKING_BYTES) side--;
  return { ...geometry, tileSize: side };
}

/**
 * The tiling for an image of `size`: one tile for the whole image when it has no more pixels than a
 * tile of {@link tileGeometry} (activation memory grows with pixels, not with the longest side, so a
 * 300x100 strip fits where a 192x192 tile does), else {@link tileGeometry}'s tiles. One tile spares
 * the overlaps' repeated work and the blending.
 */
export function imageTiling(entry: CatalogEntry, scale: number, size: { width: number; height: number }): InferenceGeometry {
  const geometry = tileGeometry(entry, scale);
  if (geometry.fixedSize || geometry.tileSize === undefined || size.width * size.height > geometry.tileSize ** 2) return geometry;
  return { ...geometry, tileSize: Math.max(size.width, size.height) };
}

/** Estimated activation memory of one tile of `entry` at `scale`, for the runtime's memory budget. */
export function tileWorkingBytes(entry: CatalogEntry, scale: number): number {
  const geometry = tileGeometry(entry, scale);
  const [width, height] = geometry.fixedSize ?? [geometry.tileSize ?? 256, geometry.tileSize ?? 256];
  return workingBytes(entry, scale, width, height);
}

/**
 * Upscales `image` by `nativeScale` with the network of `entry` (graph `x<nativeScale>`). The image is
 * RGB, or 1-channel grey for a luma network; the result is RGB, or 1-channel luma for a luma network.
 */
export async function runUpscaleNetwork(
  image: RawImage,
  entry: CatalogEntry,
  nativeScale: number,
  deps: NetworkDependencies,
  signal?: AbortSignal,
): Promise<RawImage> {
  const graph = `x${nativeScale}`;
  const format = entry.imageFormat;
  const input = entry.signature?.inputs[0]?.name;
  const output = entry.signature?.outputs[0]?.name;
  if (!entry.graphs[graph] || !format || !input || !output) {
    throw new AtelierError("INTERNAL", `The catalog entry "${entry.id}" describes no runnable graph ${graph}.`);
  }
  return runImageNetwork(
    image,
    deps.runtime,
    {
      label: `model "${entry.id}"`,
      key: deps.models.sessionKey(entry, graph),
      load: deps.models.graphLoader(entry, graph),
      options: { workingBytes: tileWorkingBytes(entry, nativeScale), session: sessionSettings(entry) },
      format,
      input,
      output,
    },
    { scale: nativeScale, geometry: imageTiling(entry, nativeScale, image), signal },
  );
}
