/**
 * Resizing between the photo's size and the working size. Lanczos3 on both ways: reducing a photo
 * with it keeps edges crisp without aliasing; enlarging the painting with it keeps brush strokes
 * sharp where a bilinear or bicubic kernel would smear them.
 */
import { rawImagePipeline, readRawImage, type RawImage } from "../image/raw-image.js";
import type { Size } from "./working-size.js";

/** `image` resized to exactly `size` (aspect as given); the same object when it already has that size. */
export async function resizeImage(image: RawImage, size: Size): Promise<RawImage> {
  if (image.width === size.width && image.height === size.height) return image;
  return readRawImage(rawImagePipeline(image).resize(size.width, size.height, { fit: "fill", kernel: "lanczos3" }));
}
