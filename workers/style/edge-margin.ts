/**
 * A reflected margin around the picture while the network paints it.
 *
 * The ml5 networks pad every convolution with zeros, and they learnt to paint a frame where the zeros
 * start: la-muse draws coloured bars along the edges, mathura an ornamental border, matilde-perez
 * white and blue bands. Painting the photo with a mirrored margin around it and cutting the margin
 * off afterwards puts that frame outside the picture; the edge of the result then looks like its
 * middle. It costs the margin's pixels: 24 % more network work at 1024x691 with 48 px a side.
 * (The nc16 networks pad by reflection themselves and need no margin.)
 */
import type { RawImage } from "../image/raw-image.js";
import { edgeIndex } from "../image/tile-grid.js";

/** Index into an axis of `size` pixels for any position, negative ones mirrored (…c b | a b c…). */
function reflected(position: number, size: number): number {
  return position < 0 ? edgeIndex(-position, size, "reflect") : edgeIndex(position, size, "reflect");
}

/** `image` with `margin` pixels of mirror image added on every side (reflection without repeating the edge). */
export function addReflectedMargin(image: RawImage, margin: number): RawImage {
  if (margin === 0) return image;
  const { channels } = image;
  const width = image.width + 2 * margin;
  const height = image.height + 2 * margin;
  const data = new Uint8Array(width * height * channels);
  const columns = Int32Array.from({ length: width }, (_, x) => reflected(x - margin, image.width));
  const rowBytes = image.width * channels;
  // Each row's picture part is one copy; only the mirrored columns beside it go pixel by pixel.
  const mirrored = (y: number, row: number, x: number) => {
    const from = (row + columns[x]!) * channels;
    const to = (y * width + x) * channels;
    for (let c = 0; c < channels; c++) data[to + c] = image.data[from + c]!;
  };
  for (let y = 0; y < height; y++) {
    const row = reflected(y - margin, image.height) * image.width;
    data.set(image.data.subarray(row * channels, row * channels + rowBytes), (y * width + margin) * channels);
    for (let x = 0; x < margin; x++) mirrored(y, row, x);
    for (let x = margin + image.width; x < width; x++) mirrored(y, row, x);
  }
  return { data, width, height, channels };
}

/** The inside of `image` without its `margin` on every side. */
export function removeMargin(image: RawImage, margin: number): RawImage {
  if (margin === 0) return image;
  const { channels } = image;
  const width = image.width - 2 * margin;
  const height = image.height - 2 * margin;
  const data = new Uint8Array(width * height * channels);
  const rowBytes = width * channels;
  for (let y = 0; y < height; y++) {
    const from = ((y + margin) * image.width + margin) * channels;
    data.set(image.data.subarray(from, from + rowBytes), y * rowBytes);
  }
  return { data, width, height, channels };
}

/**
 * `image` extended to at least `minimum` pixels a side by repeating its last column and row (a 1 px
 * image has nothing to mirror), so a network whose own reflection padding needs a few pixels per
 * axis can paint any thin image; {@link cropTo} takes the extension off afterwards.
 */
export function extendToMinimum(image: RawImage, minimum: number): RawImage {
  const width = Math.max(image.width, minimum);
  const height = Math.max(image.height, minimum);
  if (width === image.width && height === image.height) return image;
  const { channels } = image;
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    const row = Math.min(y, image.height - 1) * image.width;
    for (let x = 0; x < width; x++) {
      const from = (row + Math.min(x, image.width - 1)) * channels;
      const to = (y * width + x) * channels;
      for (let c = 0; c < channels; c++) data[to + c] = image.data[from + c]!;
    }
  }
  return { data, width, height, channels };
}

/** The top-left `width` x `height` of `image`. */
export function cropTo(image: RawImage, width: number, height: number): RawImage {
  if (width === image.width && height === image.height) return image;
  const { channels } = image;
  const data = new Uint8Array(width * height * channels);
  const rowBytes = width * channels;
  for (let y = 0; y < height; y++) {
    const from = y * image.width * channels;
    data.set(image.data.subarray(from, from + rowBytes), y * rowBytes);
  }
  return { data, width, height, channels };
}
