/** Measures of a rendered doodle for tests: grey levels, blockiness, ink extent. */
import type { RawImage } from "../../workers/image/raw-image.js";
import type { FloatMap } from "../../workers/generation/doodle/resample-map.js";

/** Number of distinct sample values. */
export function greyLevels(image: RawImage): number {
  return new Set(image.data).size;
}

/**
 * Of all strong steps between neighbouring pixels (|a - b| > 32), the fraction that lies on the
 * edges of a `block` x `block` grid: 1 for a nearest-neighbour upscale by `block`, about 1/block for
 * a drawing whose outlines run freely.
 */
export function blockiness(image: RawImage, block: number): number {
  const { data, width, height } = image;
  let steps = 0;
  let onGrid = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const here = data[y * width + x]!;
      if (x + 1 < width && Math.abs(here - data[y * width + x + 1]!) > 32) {
        steps++;
        if ((x + 1) % block === 0) onGrid++;
      }
      if (y + 1 < height && Math.abs(here - data[(y + 1) * width + x]!) > 32) {
        steps++;
        if ((y + 1) % block === 0) onGrid++;
      }
    }
  }
  return steps === 0 ? 0 : onGrid / steps;
}

/** `map` scaled up by an integer factor with nearest neighbour, thresholded to ink on paper. */
export function nearestNeighbourDrawing(map: FloatMap, factor: number): RawImage {
  const width = map.width * factor;
  const height = map.height * factor;
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data[y * width + x] = map.data[Math.floor(y / factor) * map.width + Math.floor(x / factor)]! > 0.5 ? 24 : 255;
  }
  return { data, width, height, channels: 1 };
}

/** Bounding box of the pixels darker than mid-grey, or undefined for a blank image. */
export function inkBox(image: RawImage): { left: number; top: number; right: number; bottom: number } | undefined {
  let left = Infinity;
  let top = Infinity;
  let right = -Infinity;
  let bottom = -Infinity;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      if (image.data[y * image.width + x]! >= 128) continue;
      left = Math.min(left, x);
      right = Math.max(right, x);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
    }
  }
  return Number.isFinite(left) ? { left, top, right, bottom } : undefined;
}

/** A 28x28 map like the model's: a ring and a stroke (bright ridges) over a faint haze. */
export function syntheticDoodleMap(): FloatMap {
  const size = 28;
  const data = new Float32Array(size * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const ring = Math.abs(Math.hypot(x - 13.5, y - 12) - 8);
      const stroke = Math.abs(x - 13.5) < 1.2 && y > 19 && y < 26 ? 0 : 3;
      const ridge = Math.min(ring, stroke);
      const haze = Math.hypot(x - 13.5, y - 12) < 8 ? 0.25 : 0;
      data[y * size + x] = Math.max(haze, 0.9 * Math.exp(-(ridge * ridge) / (2 * 0.8 * 0.8)));
    }
  }
  return { data, width: size, height: size };
}
