/** Classical upscaling: one Lanczos-3 resize, alpha resampled with the colour (premultiplied by libvips). */
import type { Sharp } from "sharp";
import type { OpenedImage } from "../image/open-image.js";

export function lanczosUpscale(image: OpenedImage, scale: number): Sharp {
  return image
    .pipeline()
    .resize(image.info.width * scale, image.info.height * scale, { kernel: "lanczos3", fit: "fill" });
}
