/**
 * Decodes the source three ways at once, each straight from the encoded bytes: at full resolution
 * (what the output is made of), at the network's input size, and at the working size. libvips runs
 * the three side by side on its thread pool, and JPEG's shrink-on-load makes the small ones cheap, so
 * this costs about one decode instead of a decode followed by two resizes of the decoded pixels.
 */
import { splitAlpha } from "../image/alpha.js";
import type { OpenedImage } from "../image/open-image.js";
import { readRawImage, type RawImage } from "../image/raw-image.js";
import type { FloatPlanes } from "./box-filter.js";
import { toUnitPlanes, type Size } from "./working-image.js";

export interface DecodedSource {
  /** Full-resolution colour, 3 channels. */
  rgb: RawImage;
  /** The source's own alpha, when it has one. */
  alpha: RawImage | undefined;
  /** The colour at the network's input size, 3 channels. */
  networkInput: RawImage;
  /** The colour at the working size, on 0..1 (see working-image.ts). */
  working: FloatPlanes;
}

export interface DecodeSizes {
  network: Size;
  /** Kernel for the network's input (see segmentation-models.ts). */
  networkKernel: "linear" | "lanczos3";
  working: Size;
}

export async function decodeSource(source: OpenedImage, sizes: DecodeSizes): Promise<DecodedSource> {
  const { width, height } = source.info;
  // Colour only, as RGB: the alpha plane (if any) comes from the full-resolution decode.
  const resized = (size: Size, kernel: "linear" | "lanczos3") =>
    readRawImage(source.pipeline().removeAlpha().toColourspace("srgb").resize(size.width, size.height, { fit: "fill", kernel }));
  const same = (size: Size) => size.width === width && size.height === height;
  const [full, network, working] = await Promise.all([
    readRawImage(source.pipeline()),
    same(sizes.network) ? undefined : resized(sizes.network, sizes.networkKernel),
    // A triangle filter: close to the area average the working-resolution statistics stand for.
    same(sizes.working) ? undefined : resized(sizes.working, "linear"),
  ]);
  const { rgb, alpha } = splitAlpha(full);
  return { rgb, alpha, networkInput: network ?? rgb, working: toUnitPlanes(working ?? rgb) };
}
