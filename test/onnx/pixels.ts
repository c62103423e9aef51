/** Synthetic raw images and reference operations for the image-step tests. */
import type { RawImage } from "../../workers/image/raw-image.js";

/** A deterministic image whose every sample differs from its neighbours (so misplaced pixels show). */
export function noiseImage(width: number, height: number, channels: RawImage["channels"] = 3, seed = 1): RawImage {
  const data = new Uint8Array(width * height * channels);
  let state = seed * 2654435761;
  for (let i = 0; i < data.length; i++) {
    state = (state ^ (state << 13)) >>> 0;
    state = (state ^ (state >>> 17)) >>> 0;
    state = (state ^ (state << 5)) >>> 0;
    data[i] = state & 0xff;
  }
  return { data, width, height, channels };
}

/** A uniform image. */
export function flatImage(width: number, height: number, value: number, channels: RawImage["channels"] = 3): RawImage {
  return { data: new Uint8Array(width * height * channels).fill(value), width, height, channels };
}

/** Pixel replication by an integer factor: the reference for nearest-neighbour upscaling. */
export function nearestUpscale(image: RawImage, factor: number): RawImage {
  const { width, height, channels } = image;
  const out = new Uint8Array(width * factor * height * factor * channels);
  for (let y = 0; y < height * factor; y++) {
    for (let x = 0; x < width * factor; x++) {
      const from = (Math.floor(y / factor) * width + Math.floor(x / factor)) * channels;
      const to = (y * width * factor + x) * channels;
      for (let c = 0; c < channels; c++) out[to + c] = image.data[from + c]!;
    }
  }
  return { data: out, width: width * factor, height: height * factor, channels };
}

/** Peak signal-to-noise ratio in dB between two images of equal size (Infinity when identical). */
export function psnr(a: RawImage, b: RawImage): number {
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += (a.data[i]! - b.data[i]!) ** 2;
  const mse = sum / a.data.length;
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}
