/**
 * The picture at a segmentation network's input size, sampled on the grid the network's matte is
 * mapped back with: pixel centres aligned (output pixel `j` samples the picture at
 * `(j + 0.5) * size / networkSize - 0.5`, bilinear.ts), as the networks' own reference code resizes
 * (PyTorch's `interpolate` without aligned corners, for ISNet).
 *
 * Reductions go through libvips, whose reduction is centred and takes JPEG's shrink-on-load. An
 * enlargement on either axis goes through resample.ts: libvips enlarges half an output pixel off
 * that grid (it samples at `j * size / networkSize - 0.5`), so the network would see the picture
 * shifted up and left against the grid its matte is laid back on: the matte's edges land off the
 * picture's, and thin subjects (a lattice tower's struts) drop in and out of it.
 */
import type { OpenedImage } from "../../core/open-image.js";
import { rawImagePipeline, readRawImage, type RawImage } from "../image/raw-image.js";
import { resampleAsync } from "../upscale/resample.js";
import type { Size } from "./working-image.js";

/** How the picture is resized to the network's input (the catalog's `segmentation.inputKernel`). */
export type NetworkKernel = "linear" | "lanczos3";

const reduces = (from: Size, to: Size) => to.width <= from.width && to.height <= from.height;

/** `image` (RGB) at `size`, pixel-centred (the image itself when it has that size). */
export async function resizeForNetwork(image: RawImage, size: Size, kernel: NetworkKernel): Promise<RawImage> {
  if (image.width === size.width && image.height === size.height) return image;
  if (reduces(image, size)) return readRawImage(rawImagePipeline(image).resize(size.width, size.height, { fit: "fill", kernel }));
  return resampleAsync(image, size.width, size.height, kernel);
}

/** The source's colour, as RGB, at `size`, pixel-centred, decoded straight from its bytes. */
export async function networkInputOf(source: OpenedImage, size: Size, kernel: NetworkKernel): Promise<RawImage> {
  const colour = source.pipeline().removeAlpha().toColourspace("srgb");
  if (reduces(source.info, size)) return readRawImage(colour.resize(size.width, size.height, { fit: "fill", kernel }));
  return resizeForNetwork(await readRawImage(colour), size, kernel);
}
