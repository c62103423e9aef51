/**
 * Decoded pixels as the image steps pass them along: 8 bits per sample, channels interleaved, rows
 * top to bottom, exactly sharp's `.raw()` output, so no step needs to know about sharp.
 */
import sharp, { type Sharp } from "sharp";
import { AtelierError } from "../../core/errors.js";
import { renderPipeline } from "../../core/open-image.js";

export interface RawImage {
  /** `width * height * channels` samples, 0..255. */
  data: Uint8Array;
  /** Pixels per row, at least 1. */
  width: number;
  /** Rows, at least 1. */
  height: number;
  /** Samples per pixel: 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA. */
  channels: 1 | 2 | 3 | 4;
}

/** Throws an AtelierError INTERNAL when the sizes and the sample count disagree (a programming error). */
export function assertRawImage(image: RawImage, what = "image"): void {
  const { width, height, channels, data } = image;
  if (!Number.isInteger(width) || width < 1 || !Number.isInteger(height) || height < 1) {
    throw new AtelierError("INTERNAL", `Expected positive integer sizes for the ${what} but received ${width}x${height}.`);
  }
  if (![1, 2, 3, 4].includes(channels)) {
    throw new AtelierError("INTERNAL", `Expected 1 to 4 channels for the ${what} but received ${channels}.`);
  }
  if (data.length !== width * height * channels) {
    throw new AtelierError(
      "INTERNAL",
      `Expected ${width * height * channels} samples for the ${width}x${height}x${channels} ${what} but received ${data.length}.`,
    );
  }
}

/** Renders a pipeline to 8-bit raw pixels (decoder failures become public errors, as in open-image). */
export async function readRawImage(pipeline: Sharp): Promise<RawImage> {
  const { data, info } = await renderPipeline(pipeline.raw());
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** A sharp pipeline over raw pixels, for resizing or encoding them. */
export function rawImagePipeline(image: RawImage): Sharp {
  assertRawImage(image);
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } });
}
