/**
 * The working resolution: every neighbourhood statistic (guided-filter windows, foreground and
 * background colour means, the blurred background) is computed on a copy of the image of at most a
 * quarter megapixel (fewer for the smaller networks: see `workingBudget`), and only smooth fields of it are carried to full resolution, where the matte
 * and colours are evaluated against each pixel's own colour. A 12 MP photo therefore costs about as
 * much as a small one in these steps, and its memory stays bounded. The fields are window averages,
 * so a coarser grid loses little: He and Sun's fast guided filter subsamples by 4 for the same
 * reason, and on the 1.5 MP composites of bench/background.ts a 0.25 MP working copy scores the same
 * IoU and MAE as a 1 MP one, with equal or lower edge error and old-background residue.
 */
import { rawImagePipeline, readRawImage, type RawImage } from "../image/raw-image.js";
import type { FloatPlanes } from "./box-filter.js";
import { freshPlane, type Allocate } from "./scratch-plane.js";

/** Pixels of the working copy, at most: 512 x 512. */
export const WORKING_PIXELS = 512 * 512;

/**
 * The working copy's pixel budget for a network whose matte is `networkWidth` x `networkHeight`: no
 * more pixels than the matte itself has, up to {@link WORKING_PIXELS}. The statistics refine the
 * network's matte, which holds no detail finer than its own grid; the image's finer detail enters at
 * full resolution, where the matte is evaluated against each pixel's colour (He and Sun's fast guided
 * filter). So the people models (256 x 256 and 320 x 320) work on 0.07 and 0.10 MP, a quarter and
 * two fifths of ISNet's 0.25 MP, and every working-resolution step costs that much less. On the
 * person composites of bench/background.ts at 0.17 and 1 MP, the selfie and SINet mattes score the
 * same IoU and MAE as with 0.25 MP (within 0.001) and the same edge-band error (within 0.004, lower
 * more often than not); the mattes themselves differ by 0.2 to 0.4/255 on average, 2 to 3/255 in the
 * edge band.
 */
export function workingBudget(networkWidth: number, networkHeight: number): number {
  return Math.min(WORKING_PIXELS, networkWidth * networkHeight);
}

export interface Size {
  width: number;
  height: number;
}

/** The image's size scaled down (never up) to at most `budget` pixels, keeping the aspect ratio. */
export function workingSize(width: number, height: number, budget = WORKING_PIXELS): Size {
  const pixels = width * height;
  if (pixels <= budget) return { width, height };
  const factor = Math.sqrt(budget / pixels);
  return { width: Math.max(1, Math.floor(width * factor)), height: Math.max(1, Math.floor(height * factor)) };
}

/** 8-bit samples as floats on 0..1. */
export function toUnitPlanes(image: RawImage, allocate: Allocate = freshPlane): FloatPlanes {
  const data = allocate(image.data.length);
  for (let i = 0; i < data.length; i++) data[i] = image.data[i]! / 255;
  return { data, width: image.width, height: image.height, channels: image.channels };
}

/** The RGB image at `size`, on 0..1 (the image itself when it already has that size). */
export async function workingCopy(rgb: RawImage, size: Size): Promise<FloatPlanes> {
  if (rgb.width === size.width && rgb.height === size.height) return toUnitPlanes(rgb);
  // A triangle filter: close to the area average the working-resolution statistics stand for.
  return toUnitPlanes(await readRawImage(rawImagePipeline(rgb).resize(size.width, size.height, { fit: "fill", kernel: "linear" })));
}
