/**
 * Lanczos-3 resampling. The classical model is one libvips resize through sharp; the steps around a
 * network resize raw pixels on the network's pixel grid (see resample.ts for why that matters).
 */
import type { Sharp } from "sharp";
import type { OpenedImage } from "../image/open-image.js";
import { rawImagePipeline, readRawImage, type RawImage } from "../image/raw-image.js";
import { resample } from "./resample.js";

/**
 * The classical model: alpha is resampled with the colour (premultiplied by libvips). sharp 0.35
 * writes sRGB unless told otherwise, so grey input is turned back to grey (alpha kept).
 */
export function lanczosUpscale(image: OpenedImage, scale: number): Sharp {
  const resized = image
    .pipeline()
    .resize(image.info.width * scale, image.info.height * scale, { kernel: "lanczos3", fit: "fill" });
  return image.info.colorChannels === 1 ? resized.toColourspace("b-w") : resized;
}

/**
 * Resizes raw pixels to exactly `width` x `height` with pixel centres aligned. RGB reductions go
 * through libvips, whose reduction is centred (within 0.2 levels on average of resample.ts) and
 * about 30 times faster; enlargements, and planes libvips would reinterpret (grey, alpha), use resample.ts.
 */
export async function lanczosResize(image: RawImage, width: number, height: number): Promise<RawImage> {
  if (width === image.width && height === image.height) return image;
  if (image.channels === 3 && width <= image.width && height <= image.height) {
    return readRawImage(rawImagePipeline(image).resize(width, height, { kernel: "lanczos3", fit: "fill" }));
  }
  return resample(image, width, height, "lanczos3");
}
