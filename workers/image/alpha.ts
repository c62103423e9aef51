/**
 * Models see RGB only. Alpha is taken off before inference and put back afterwards; the caller
 * resamples the alpha plane on its own (a classical resize is right for a mask, and a network trained
 * on photographs would invent texture in it). Grey inputs become RGB here, so every model step can
 * assume three colour channels; palette images already arrive expanded from sharp's `.raw()`.
 */
import { AtelierError } from "../../core/errors.js";
import { assertRawImage, type RawImage } from "./raw-image.js";

export interface SplitImage {
  /** The colour, 3 channels. */
  rgb: RawImage;
  /** The alpha plane, 1 channel of the same size; undefined when the source had none. */
  alpha: RawImage | undefined;
}

/** Splits a 1- to 4-channel image into RGB and its alpha plane (if any). */
export function splitAlpha(image: RawImage): SplitImage {
  assertRawImage(image);
  const { width, height, channels, data } = image;
  if (channels === 3) return { rgb: image, alpha: undefined };
  const pixels = width * height;
  const rgb = new Uint8Array(pixels * 3);
  const hasAlpha = channels === 2 || channels === 4;
  const alpha = hasAlpha ? new Uint8Array(pixels) : undefined;
  const colour = channels >= 3 ? 3 : 1;
  for (let p = 0; p < pixels; p++) {
    const from = p * channels;
    if (colour === 3) {
      rgb[p * 3] = data[from]!;
      rgb[p * 3 + 1] = data[from + 1]!;
      rgb[p * 3 + 2] = data[from + 2]!;
    } else {
      rgb[p * 3] = rgb[p * 3 + 1] = rgb[p * 3 + 2] = data[from]!;
    }
    if (alpha) alpha[p] = data[from + colour]!;
  }
  return {
    rgb: { data: rgb, width, height, channels: 3 },
    alpha: alpha && { data: alpha, width, height, channels: 1 },
  };
}

/**
 * Joins colour and an alpha plane of the same size into RGBA; without alpha, returns RGB. A 1-channel
 * colour image (a luma result) is spread to RGB first.
 */
export function mergeAlpha(colour: RawImage, alpha: RawImage | undefined): RawImage {
  assertRawImage(colour, "colour image");
  const { width, height } = colour;
  if (colour.channels !== 1 && colour.channels !== 3) {
    throw new AtelierError("INTERNAL", `Expected a 1- or 3-channel colour image but received ${colour.channels} channels.`);
  }
  if (alpha) {
    assertRawImage(alpha, "alpha plane");
    if (alpha.channels !== 1 || alpha.width !== width || alpha.height !== height) {
      throw new AtelierError(
        "INTERNAL",
        `Expected a 1-channel ${width}x${height} alpha plane but received ${alpha.width}x${alpha.height}x${alpha.channels}; resize it to the colour image first.`,
      );
    }
  } else if (colour.channels === 3) {
    return colour;
  }
  const pixels = width * height;
  const channels = alpha ? 4 : 3;
  const out = new Uint8Array(pixels * channels);
  const grey = colour.channels === 1;
  for (let p = 0; p < pixels; p++) {
    const to = p * channels;
    if (grey) {
      out[to] = out[to + 1] = out[to + 2] = colour.data[p]!;
    } else {
      out[to] = colour.data[p * 3]!;
      out[to + 1] = colour.data[p * 3 + 1]!;
      out[to + 2] = colour.data[p * 3 + 2]!;
    }
    if (alpha) out[to + 3] = alpha.data[p]!;
  }
  return { data: out, width, height, channels: channels as 3 | 4 };
}
