/**
 * What goes behind the subject, prepared at the sizes compose.ts reads: a colour, another image
 * cover-fitted to the source's size, or the source's own background blurred at the working
 * resolution.
 */
import { AtelierError } from "../../core/errors.js";
import type { ImageLimits } from "../../core/image-limits.js";
import { openImage } from "../../core/open-image.js";
import { readRawImage, type RawImage } from "../image/raw-image.js";
import { gaussianMean, type FloatPlanes } from "./box-filter.js";

export type BackgroundFill =
  /** Nothing: a cutout with transparency. */
  | { kind: "transparent" }
  /** A solid colour, channels 0..255, alpha 0..1. */
  | { kind: "color"; red: number; green: number; blue: number; alpha: number }
  /** An image of exactly the source's size, 3 (RGB) or 4 (RGBA) channels. */
  | { kind: "image"; image: RawImage }
  /** The source's background blurred, RGB on 0..1 at the working resolution. */
  | { kind: "blur"; background: FloatPlanes };

/** A fill whose pixels are all opaque: the composite needs no alpha channel. */
export function isOpaque(fill: BackgroundFill): boolean {
  switch (fill.kind) {
    case "transparent":
      return false;
    case "color":
      return fill.alpha >= 1;
    case "image":
      return fill.image.channels === 3;
    case "blur":
      return true;
  }
}

/**
 * Decodes a background image (same limits as any source) and scales it to cover `width` x `height`,
 * cropping the overflow around the centre, as CSS `background-size: cover` does.
 */
export async function coverFit(bytes: Uint8Array, width: number, height: number, limits: ImageLimits): Promise<RawImage> {
  let opened;
  try {
    opened = await openImage(bytes, limits);
  } catch (error) {
    if (error instanceof AtelierError) {
      throw new AtelierError(error.code, `Replacement background: ${error.message}`, { cause: error, issues: [{ path: "replacement", message: error.message }] });
    }
    throw error;
  }
  // The centred crop with the target's aspect ratio is cut out first, then scaled: resizing the
  // whole image to cover would build a 48000000x480 intermediate from a 100000x1 one (libvips refuses).
  const crop = coverCrop(opened.info.width, opened.info.height, width, height);
  const pipeline = opened.pipeline().extract(crop).toColourspace("srgb").resize(width, height, { fit: "fill" });
  const image = await readRawImage(opened.info.hasAlpha ? pipeline.ensureAlpha() : pipeline.removeAlpha());
  return image;
}

/** The centred region of a `sourceWidth` x `sourceHeight` image with the aspect ratio of `width` x `height`. */
export function coverCrop(sourceWidth: number, sourceHeight: number, width: number, height: number): { left: number; top: number; width: number; height: number } {
  const scale = Math.max(width / sourceWidth, height / sourceHeight);
  const cropWidth = Math.min(sourceWidth, Math.max(1, Math.round(width / scale)));
  const cropHeight = Math.min(sourceHeight, Math.max(1, Math.round(height / scale)));
  return { left: Math.floor((sourceWidth - cropWidth) / 2), top: Math.floor((sourceHeight - cropHeight) / 2), width: cropWidth, height: cropHeight };
}

/** Default blur strength: 1.5 % of the long side of the image, between 2 and 100 pixels. */
export function defaultBlurSigma(width: number, height: number): number {
  return Math.min(100, Math.max(2, 0.015 * Math.max(width, height)));
}

/** Weight of the plain blur mixed into the weighted one (see blurredBackground). */
const PLAIN_SHARE = 1e-3;

/**
 * The background with the subject taken out, then blurred: a blur weighted by `1 - alpha`
 * (normalised convolution), so the subject's colours do not smear into a halo around it. Where the
 * subject covers the whole blur window, it tends to the plain blur (hidden behind the subject anyway).
 *
 * @param guide RGB on 0..1 at the working resolution.
 * @param alpha The refined matte at the same resolution.
 * @param sigma Gaussian sigma in working pixels.
 */
export function blurredBackground(guide: FloatPlanes, alpha: FloatPlanes, sigma: number): FloatPlanes {
  const { width, height } = guide;
  const pixels = width * height;
  const weighted = new Float32Array(pixels * 7);
  for (let i = 0; i < pixels; i++) {
    const w = 1 - alpha.data[i]!;
    const o = i * 7;
    for (let c = 0; c < 3; c++) {
      const v = guide.data[i * 3 + c]!;
      weighted[o + c] = v * w;
      weighted[o + 3 + c] = v;
    }
    weighted[o + 6] = w;
  }
  const blurred = gaussianMean({ data: weighted, width, height, channels: 7 }, sigma).data;
  const out = new Float32Array(pixels * 3);
  for (let i = 0; i < pixels; i++) {
    const o = i * 7;
    const w = blurred[o + 6]!;
    // A small share of the plain blur keeps the division stable where the weights vanish.
    for (let c = 0; c < 3; c++) out[i * 3 + c] = (blurred[o + c]! + PLAIN_SHARE * blurred[o + 3 + c]!) / (w + PLAIN_SHARE);
  }
  return { data: out, width, height, channels: 3 };
}
