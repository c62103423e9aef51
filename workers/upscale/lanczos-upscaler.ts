/**
 * Lanczos-3 resampling, pixel-centred throughout (resample.ts): the classical model, and the steps
 * around a network, which resize raw pixels on the network's pixel grid.
 */
import { rawImagePipeline, readRawImage, type RawImage } from "../image/raw-image.js";
import { greyKeepingAlpha } from "./colour-planes.js";
import { resampleAsync } from "./resample.js";

export interface LanczosUpscaleOptions {
  /**
   * Produce grey (1 channel, 2 with alpha). Decoders may hand grey images over as RGB (sharp does), so
   * the caller says what the file was; resampling one channel instead of three is also a third the work.
   */
  grey?: boolean;
  /** Checked between bands of rows; an abort rejects with CANCELLED. */
  signal?: AbortSignal;
}

/**
 * The classical model on decoded pixels (1 to 4 channels). Alpha is resampled with the colour,
 * premultiplied, so the colour hidden under transparent pixels does not bleed into the visible edge
 * (what libvips did when this model was its resize). The work gives the event loop a turn between
 * bands of rows, since unlike libvips it runs on the worker's main thread.
 */
export async function lanczosUpscale(source: RawImage, scale: number, options: LanczosUpscaleOptions = {}): Promise<RawImage> {
  const image = options.grey ? greyKeepingAlpha(source) : source;
  return resampleAsync(image, image.width * scale, image.height * scale, "lanczos3", { premultiplyAlpha: true, signal: options.signal });
}

/**
 * Resizes raw pixels to exactly `width` x `height` with pixel centres aligned. RGB reductions go
 * through libvips, whose reduction is centred (within 0.2 levels on average of resample.ts) and
 * about 30 times faster; enlargements, and planes libvips would reinterpret (grey, alpha), use
 * resample.ts in bands, giving the event loop a turn between them (an enlargement to 12 MP is about
 * a second of work on the thread that also answers gRPC) and stopping there when `signal` aborts.
 */
export async function lanczosResize(image: RawImage, width: number, height: number, signal?: AbortSignal): Promise<RawImage> {
  if (width === image.width && height === image.height) return image;
  if (image.channels === 3 && width <= image.width && height <= image.height) {
    return readRawImage(rawImagePipeline(image).resize(width, height, { kernel: "lanczos3", fit: "fill" }));
  }
  return resampleAsync(image, width, height, "lanczos3", { signal });
}
