/**
 * The evaluation protocol of the upscaling benchmark, shared with test/upscale so the tests check
 * what the benchmark measures.
 *
 * A high-resolution (HR) centre crop of a photograph is reduced by the factor with antialiased bicubic
 * (the degradation the networks were trained on), upscaled back, and compared with the crop on luma only (BT.601,
 * full range, unrounded), with `scale` pixels shaved off each border, as super-resolution papers do
 * (the border depends on padding conventions, not on the method).
 *
 * SSIM follows Wang et al. 2004 and their reference code: 11x11 Gaussian window (sigma 1.5), K1 = 0.01,
 * K2 = 0.03, L = 255, statistics over "valid" windows only, the mean of the SSIM map.
 */
import sharp from "sharp";
import { LUMA_WEIGHTS } from "../workers/image/image-tensor.js";
import type { RawImage } from "../workers/image/raw-image.js";
import { resample } from "../workers/upscale/resample.js";

/** Luma plane of a 1- to 4-channel image as floats 0..255 (grey is taken as is; alpha is ignored). */
export function lumaPlane(image: RawImage): Float64Array {
  const { width, height, channels, data } = image;
  const out = new Float64Array(width * height);
  const [kr, kg, kb] = LUMA_WEIGHTS;
  for (let p = 0; p < out.length; p++) {
    const at = p * channels;
    out[p] = channels >= 3 ? kr * data[at]! + kg * data[at + 1]! + kb * data[at + 2]! : data[at]!;
  }
  return out;
}

/** A plane with `border` pixels removed from every side. */
export interface Plane {
  data: Float64Array;
  width: number;
  height: number;
}

function shavedLuma(image: RawImage, border: number): Plane {
  const full = lumaPlane(image);
  const width = image.width - 2 * border;
  const height = image.height - 2 * border;
  if (width < 11 || height < 11) throw new Error(`Image ${image.width}x${image.height} too small to shave ${border} and measure.`);
  const data = new Float64Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data[y * width + x] = full[(y + border) * image.width + x + border]!;
  }
  return { data, width, height };
}

function assertSameSize(a: RawImage, b: RawImage): void {
  if (a.width !== b.width || a.height !== b.height) throw new Error(`Size mismatch: ${a.width}x${a.height} vs ${b.width}x${b.height}.`);
}

/** PSNR in dB of `test` against `reference` on luma, `border` pixels shaved (Infinity when equal). */
export function psnrY(reference: RawImage, test: RawImage, border = 0): number {
  assertSameSize(reference, test);
  const a = shavedLuma(reference, border).data;
  const b = shavedLuma(test, border).data;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i]! - b[i]!) ** 2;
  const mse = sum / a.length;
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}

const WINDOW = 11;
const SIGMA = 1.5;
const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

/** The normalised 1-D Gaussian; the 2-D window is its outer product. */
function gaussian1d(): Float64Array {
  const g = new Float64Array(WINDOW);
  const centre = (WINDOW - 1) / 2;
  let sum = 0;
  for (let i = 0; i < WINDOW; i++) sum += g[i] = Math.exp(-((i - centre) ** 2) / (2 * SIGMA * SIGMA));
  for (let i = 0; i < WINDOW; i++) g[i]! /= sum;
  return g;
}

/** Separable "valid" filtering with the Gaussian window: output is (w - 10) x (h - 10). */
function filterValid(plane: Float64Array, width: number, height: number, g: Float64Array): Float64Array {
  const outWidth = width - WINDOW + 1;
  const outHeight = height - WINDOW + 1;
  const rows = new Float64Array(outWidth * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < outWidth; x++) {
      let sum = 0;
      for (let k = 0; k < WINDOW; k++) sum += g[k]! * plane[y * width + x + k]!;
      rows[y * outWidth + x] = sum;
    }
  }
  const out = new Float64Array(outWidth * outHeight);
  for (let y = 0; y < outHeight; y++) {
    for (let x = 0; x < outWidth; x++) {
      let sum = 0;
      for (let k = 0; k < WINDOW; k++) sum += g[k]! * rows[(y + k) * outWidth + x]!;
      out[y * outWidth + x] = sum;
    }
  }
  return out;
}

/** Mean SSIM of `test` against `reference` on luma, `border` pixels shaved (1 when equal). */
export function ssimY(reference: RawImage, test: RawImage, border = 0): number {
  assertSameSize(reference, test);
  const a = shavedLuma(reference, border);
  const b = shavedLuma(test, border);
  const { width, height } = a;
  const g = gaussian1d();
  const product = (p: Float64Array, q: Float64Array) => p.map((v, i) => v * q[i]!);
  const muA = filterValid(a.data, width, height, g);
  const muB = filterValid(b.data, width, height, g);
  const aa = filterValid(product(a.data, a.data), width, height, g);
  const bb = filterValid(product(b.data, b.data), width, height, g);
  const ab = filterValid(product(a.data, b.data), width, height, g);
  let sum = 0;
  for (let i = 0; i < muA.length; i++) {
    const ma = muA[i]!;
    const mb = muB[i]!;
    const va = aa[i]! - ma * ma;
    const vb = bb[i]! - mb * mb;
    const cov = ab[i]! - ma * mb;
    sum += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
  }
  return sum / muA.length;
}

/** Decodes a file (EXIF-oriented, alpha removed) and cuts the centre `size` x `size`, RGB or grey as stored. */
export async function centreCrop(file: string, size: number): Promise<RawImage> {
  const image = sharp(file).rotate().removeAlpha();
  const metadata = await sharp(file).metadata();
  const { width = 0, height = 0 } = metadata.autoOrient ?? metadata;
  if (width < size || height < size) throw new Error(`${file} is ${width}x${height}, smaller than the ${size} crop.`);
  const { data, info } = await image
    .extract({ left: Math.floor((width - size) / 2), top: Math.floor((height - size) / 2), width: size, height: size })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels as RawImage["channels"] };
}

/** The low-resolution input: `hr` reduced by `scale` with antialiased bicubic (Keys a = -0.5, as MATLAB's imresize). */
export function degrade(hr: RawImage, scale: number): RawImage {
  if (hr.width % scale !== 0 || hr.height % scale !== 0) throw new Error(`${hr.width}x${hr.height} is not a multiple of ${scale}.`);
  return resample(hr, hr.width / scale, hr.height / scale, "bicubic");
}

/**
 * sharp's lanczos3 resize (libvips) on raw pixels: the classical model until it moved to resample.ts,
 * kept as the weaker baseline, since libvips enlarges half an output pixel off the pixel centres (see
 * workers/upscale/resample.ts).
 */
export async function sharpLanczos(image: RawImage, width: number, height: number): Promise<RawImage> {
  let pipeline = sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } }).resize(width, height, {
    kernel: "lanczos3",
    fit: "fill",
  });
  if (image.channels === 1) pipeline = pipeline.toColourspace("b-w");
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels as RawImage["channels"] };
}
