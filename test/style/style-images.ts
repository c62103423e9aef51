/** Measures on raw images for the style tests: chroma means, differences, seam strength. */
import sharp from "sharp";
import type { RawImage } from "../../workers/image/raw-image.js";

/** Mean Cb and Cr (full-range BT.601, centred on 0) of an RGB or RGBA image. */
export function chromaMeans(image: RawImage): [number, number] {
  const { channels, data } = image;
  const pixels = image.width * image.height;
  let cb = 0;
  let cr = 0;
  for (let p = 0; p < pixels; p++) {
    const [r, g, b] = [data[p * channels]!, data[p * channels + 1]!, data[p * channels + 2]!];
    cb += -0.168736 * r - 0.331264 * g + 0.5 * b;
    cr += 0.5 * r - 0.418688 * g - 0.081312 * b;
  }
  return [cb / pixels, cr / pixels];
}

/** Mean per-pixel distance between two images' (Cb, Cr) chroma, full-range BT.601. */
export function chromaDistance(a: RawImage, b: RawImage): number {
  const chroma = (image: RawImage, p: number): [number, number] => {
    const at = p * image.channels;
    const [r, g, bl] = [image.data[at]!, image.data[at + 1]!, image.data[at + 2]!];
    return [-0.168736 * r - 0.331264 * g + 0.5 * bl, 0.5 * r - 0.418688 * g - 0.081312 * bl];
  };
  const pixels = a.width * a.height;
  let sum = 0;
  for (let p = 0; p < pixels; p++) {
    const [cbA, crA] = chroma(a, p);
    const [cbB, crB] = chroma(b, p);
    sum += Math.hypot(cbA - cbB, crA - crB);
  }
  return sum / pixels;
}

/** Largest and mean absolute sample difference between two images of one size and channel count. */
export function difference(a: RawImage, b: RawImage): { max: number; mean: number } {
  if (a.width !== b.width || a.height !== b.height || a.channels !== b.channels) {
    throw new Error(`sizes differ: ${a.width}x${a.height}x${a.channels} vs ${b.width}x${b.height}x${b.channels}`);
  }
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) {
    const d = Math.abs(a.data[i]! - b.data[i]!);
    sum += d;
    if (d > max) max = d;
  }
  return { max, mean: sum / a.data.length };
}

/** Mean absolute step between column x and x + 1, for every x (all rows and channels). */
export function columnSteps(image: RawImage): number[] {
  const { width, height, channels, data } = image;
  const steps: number[] = [];
  for (let x = 0; x + 1 < width; x++) {
    let sum = 0;
    for (let y = 0; y < height; y++) {
      for (let c = 0; c < channels; c++) sum += Math.abs(data[(y * width + x + 1) * channels + c]! - data[(y * width + x) * channels + c]!);
    }
    steps.push(sum / (height * channels));
  }
  return steps;
}

/** The image turned by 90 degrees, so row steps can be measured as column steps. */
export function transpose(image: RawImage): RawImage {
  const { width, height, channels, data } = image;
  const out = new Uint8Array(data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) out[(x * height + y) * channels + c] = data[(y * width + x) * channels + c]!;
    }
  }
  return { data: out, width: height, height: width, channels };
}

/** Decodes encoded image bytes to raw pixels (channels as stored). */
export async function decode(bytes: Uint8Array): Promise<RawImage> {
  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels as RawImage["channels"] };
}

/** A photo (file or encoded bytes) as RGB pixels, optionally resized (lanczos3) to exactly `width` x `height`. */
export async function photoPixels(file: string | Buffer, size?: { width: number; height: number }): Promise<RawImage> {
  let pipeline = sharp(file).removeAlpha().toColourspace("srgb");
  if (size) pipeline = pipeline.resize(size.width, size.height, { fit: "fill", kernel: "lanczos3" });
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: 3 };
}

/** PNG bytes of raw pixels. */
export function png(image: RawImage): Promise<Buffer> {
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } }).png().toBuffer();
}

/** A colour's bin: 8 levels per channel, so strokes of one hue and shade share a bin. */
function colourBin(image: RawImage, pixel: number): number {
  const at = pixel * image.channels;
  return ((image.data[at]! >> 5) << 6) | ((image.data[at + 1]! >> 5) << 3) | (image.data[at + 2]! >> 5);
}

/** The colour bins a painting uses, each holding at least one pixel in a thousand: a style's palette. */
export function palette(painting: RawImage): Set<number> {
  const pixels = painting.width * painting.height;
  const counts = new Map<number, number>();
  for (let p = 0; p < pixels; p++) {
    const bin = colourBin(painting, p);
    counts.set(bin, (counts.get(bin) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, count]) => count >= pixels / 1000).map(([bin]) => bin));
}

/** The share of `image`'s pixels whose colour is in `colours` (a palette()). */
export function shareInPalette(image: RawImage, colours: Set<number>): number {
  const pixels = image.width * image.height;
  let inside = 0;
  for (let p = 0; p < pixels; p++) if (colours.has(colourBin(image, p))) inside++;
  return inside / pixels;
}

/** True when every pixel of the image has the first pixel's colour (a blank image). */
export function isOneColour(image: RawImage): boolean {
  const first = image.data.subarray(0, image.channels);
  for (let i = image.channels; i < image.width * image.height * image.channels; i++) {
    if (image.data[i] !== first[i % image.channels]) return false;
  }
  return true;
}
