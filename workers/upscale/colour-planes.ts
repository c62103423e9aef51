/**
 * Per-pixel colour arithmetic around the upscalers: grey output for grey input, a luma-only network's
 * result combined with classically resampled chroma, and a grey image joined with its alpha plane.
 */
import { AtelierError } from "../../core/errors.js";
import { splitAlpha } from "../image/alpha.js";
import { LUMA_WEIGHTS, toSample } from "../image/image-tensor.js";
import { assertRawImage, type RawImage } from "../image/raw-image.js";

function assertSameSize(a: RawImage, b: RawImage, what: string): void {
  if (a.width !== b.width || a.height !== b.height) {
    throw new AtelierError("INTERNAL", `Expected ${what} of ${a.width}x${a.height} but received ${b.width}x${b.height}.`);
  }
}

/** BT.601 luma of an RGB image as a 1-channel image (a 1-channel image is returned as is). */
export function toGrey(image: RawImage): RawImage {
  assertRawImage(image);
  if (image.channels === 1) return image;
  if (image.channels !== 3) throw new AtelierError("INTERNAL", `Expected an RGB image but received ${image.channels} channels.`);
  const pixels = image.width * image.height;
  const out = new Uint8Array(pixels);
  const [kr, kg, kb] = LUMA_WEIGHTS;
  const { data } = image;
  for (let p = 0; p < pixels; p++) out[p] = toSample(kr * data[p * 3]! + kg * data[p * 3 + 1]! + kb * data[p * 3 + 2]!);
  return { data: out, width: image.width, height: image.height, channels: 1 };
}

/**
 * Replaces the luma of `colour` (RGB) by `luma` (1 channel, same size), keeping its chroma: adding
 * the same amount to R, G and B changes BT.601 Y by that amount and leaves Cb and Cr unchanged.
 */
export function replaceLuma(colour: RawImage, luma: RawImage): RawImage {
  assertRawImage(colour, "colour image");
  assertRawImage(luma, "luma plane");
  assertSameSize(colour, luma, "a luma plane");
  if (colour.channels !== 3 || luma.channels !== 1) {
    throw new AtelierError("INTERNAL", `Expected RGB colour and a 1-channel luma plane but received ${colour.channels} and ${luma.channels}.`);
  }
  const pixels = colour.width * colour.height;
  const out = new Uint8Array(pixels * 3);
  const [kr, kg, kb] = LUMA_WEIGHTS;
  const c = colour.data;
  for (let p = 0; p < pixels; p++) {
    const r = c[p * 3]!;
    const g = c[p * 3 + 1]!;
    const b = c[p * 3 + 2]!;
    const delta = luma.data[p]! - (kr * r + kg * g + kb * b);
    out[p * 3] = toSample(r + delta);
    out[p * 3 + 1] = toSample(g + delta);
    out[p * 3 + 2] = toSample(b + delta);
  }
  return { data: out, width: colour.width, height: colour.height, channels: 3 };
}

/** Interleaves a grey image and its alpha plane (same size) into a 2-channel image. */
export function mergeGreyAlpha(grey: RawImage, alpha: RawImage): RawImage {
  assertRawImage(grey, "grey image");
  assertRawImage(alpha, "alpha plane");
  assertSameSize(grey, alpha, "an alpha plane");
  if (grey.channels !== 1 || alpha.channels !== 1) {
    throw new AtelierError("INTERNAL", `Expected two 1-channel planes but received ${grey.channels} and ${alpha.channels}.`);
  }
  const pixels = grey.width * grey.height;
  const out = new Uint8Array(pixels * 2);
  for (let p = 0; p < pixels; p++) {
    out[p * 2] = grey.data[p]!;
    out[p * 2 + 1] = alpha.data[p]!;
  }
  return { data: out, width: grey.width, height: grey.height, channels: 2 };
}

/** A 1- to 4-channel image as grey (BT.601 luma), alpha kept: 1 channel, or 2 with alpha. */
export function greyKeepingAlpha(image: RawImage): RawImage {
  const { rgb, alpha } = splitAlpha(image);
  const grey = toGrey(rgb);
  return alpha ? mergeGreyAlpha(grey, alpha) : grey;
}
