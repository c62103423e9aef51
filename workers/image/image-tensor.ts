/**
 * Raw pixels to a model's input tensor and a model's output tensor back to pixels, following the
 * catalog's {@link ImageTensorFormat}: layout (NCHW planar or NHWC interleaved), channel order (RGB,
 * BGR, or Y, the BT.601 luma), value range, then per-channel mean and std.
 *
 * Each tensor channel `t` maps a sample `v` (0..255) as `((v / 255) * (hi - lo) + lo - mean[t]) / std[t]`,
 * folded into one multiply-add per sample; the way back inverts it, then clamps and rounds.
 */
import { AtelierError } from "../../core/errors.js";
import type { ImageTensorFormat } from "../../models/catalog/catalog-types.js";
import type { ByteTensor, TensorData } from "../onnx/tensor-data.js";
import { assertRawImage, type RawImage } from "./raw-image.js";

/** BT.601 luma weights (as PIL's YCbCr and the ESPCN training pipeline use), full range. */
export const LUMA_WEIGHTS = [0.299, 0.587, 0.114] as const;

/** Channels of a tensor in this format: 1 for Y, 3 otherwise. */
export function tensorChannels(format: ImageTensorFormat): 1 | 3 {
  return format.channelOrder === "Y" ? 1 : 3;
}

/** Per tensor channel: `tensorValue = sample * scale + offset`. */
function affine(format: ImageTensorFormat): { scale: number[]; offset: number[] } {
  const channels = tensorChannels(format);
  const [lo, hi] = format.range;
  const mean = format.mean ?? new Array<number>(channels).fill(0);
  const std = format.std ?? new Array<number>(channels).fill(1);
  if (mean.length !== channels || std.length !== channels) {
    throw new AtelierError(
      "INTERNAL",
      `Expected ${channels} mean and std values for channel order ${format.channelOrder} but received ${mean.length} and ${std.length}.`,
    );
  }
  if (hi === lo || std.some((s) => s === 0 || !Number.isFinite(s))) {
    throw new AtelierError("INTERNAL", `Image tensor format has an empty range [${lo}, ${hi}] or a zero std.`);
  }
  return {
    scale: std.map((s) => (hi - lo) / 255 / s),
    offset: mean.map((m, t) => (lo - m) / std[t]!),
  };
}

/** Index of the image channel feeding tensor channel `t` (BGR reverses RGB). */
function sourceChannel(format: ImageTensorFormat, t: number): number {
  return format.channelOrder === "BGR" ? 2 - t : t;
}

/**
 * A `[1, C, H, W]` (NCHW) or `[1, H, W, C]` (NHWC) tensor of `image`. RGB and BGR need a 3-channel
 * image; Y takes a 3-channel image (luma computed) or a 1-channel one (used as is). Split alpha first
 * (see alpha.ts).
 */
export function imageToTensor(image: RawImage, format: ImageTensorFormat): TensorData {
  assertRawImage(image);
  const channels = tensorChannels(format);
  const { width, height, data } = image;
  const accepted = format.channelOrder === "Y" ? [1, 3] : [3];
  if (!accepted.includes(image.channels)) {
    throw new AtelierError(
      "INTERNAL",
      `Expected ${accepted.join(" or ")} image channels for channel order ${format.channelOrder} but received ${image.channels}.`,
    );
  }
  const { scale, offset } = affine(format);
  const pixels = width * height;
  const out = new Float32Array(pixels * channels);
  if (format.channelOrder === "Y") {
    const [kr, kg, kb] = LUMA_WEIGHTS;
    const s = scale[0]!;
    const o = offset[0]!;
    if (image.channels === 1) for (let p = 0; p < pixels; p++) out[p] = data[p]! * s + o;
    else for (let p = 0, i = 0; p < pixels; p++, i += 3) out[p] = (kr * data[i]! + kg * data[i + 1]! + kb * data[i + 2]!) * s + o;
  } else {
    // One plain strided loop per tensor channel: this runs over every input pixel of every call.
    const planar = format.layout === "NCHW";
    for (let t = 0; t < 3; t++) {
      const s = scale[t]!;
      const o = offset[t]!;
      const step = planar ? 1 : 3;
      for (let p = 0, from = sourceChannel(format, t), to = planar ? t * pixels : t; p < pixels; p++, from += 3, to += step) out[to] = data[from]! * s + o;
    }
  }
  const dims = format.layout === "NCHW" ? [1, channels, height, width] : [1, height, width, channels];
  return { data: out, dims };
}

/** Reads back sizes from a `[1, C, H, W]` / `[1, H, W, C]` tensor, checking it matches the format. */
function tensorGeometry(tensor: TensorData, format: ImageTensorFormat): { width: number; height: number } {
  const channels = tensorChannels(format);
  const [batch, a, b, c] = tensor.dims;
  const [found, height, width] = format.layout === "NCHW" ? [a, b, c] : [c, a, b];
  if (tensor.dims.length !== 4 || batch !== 1 || found !== channels || !(height! > 0) || !(width! > 0)) {
    const expected = format.layout === "NCHW" ? `[1, ${channels}, H, W]` : `[1, H, W, ${channels}]`;
    throw new AtelierError("INTERNAL", `Expected an image tensor of shape ${expected} but received [${tensor.dims.join(", ")}].`);
  }
  if (tensor.data.length !== channels * height! * width!) {
    throw new AtelierError("INTERNAL", `Image tensor of shape [${tensor.dims.join(", ")}] has ${tensor.data.length} values.`);
  }
  return { width: width!, height: height! };
}

/** A rectangle of pixels: top-left corner and size. */
export interface PixelRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * A model output tensor read back as an image, without converting all of it first: tiling blends the
 * few pixels where tiles overlap sample by sample and rounds the rest straight into the output.
 */
export interface TensorImage {
  width: number;
  height: number;
  /** Image channels: 3 (RGB) or 1 (grey, for Y). */
  channels: 1 | 3;
  /**
   * The samples of pixels `from` to `to` (exclusive) of row `y`, channels interleaved, into `into` from
   * its start: on the 0..255 scale, as float32, neither clamped nor rounded.
   */
  readRow(y: number, from: number, to: number, into: Float32Array): void;
  /**
   * Writes the pixels of `region`, clamped and rounded ({@link toSample} of {@link sample}), into
   * `target` (same channels) with the region's top-left pixel at (`x`, `y`).
   */
  copyTo(region: PixelRect, target: RawImage, x: number, y: number): void;
}

/** Reads `tensor` (`[1, C, H, W]` or `[1, H, W, C]` as `format` says) back as pixels. */
export function tensorImage(tensor: TensorData, format: ImageTensorFormat): TensorImage {
  const { width, height } = tensorGeometry(tensor, format);
  const channels = tensorChannels(format);
  const { scale, offset } = affine(format);
  const planar = format.layout === "NCHW";
  const { data } = tensor;
  // Tensor index of (image channel c, pixel p): the tensor channel feeding c (BGR reverses RGB, and
  // reversing is its own inverse), then the layout; neighbouring pixels are `step` apart.
  const first = (c: number, p: number) => {
    const t = sourceChannel(format, c);
    return planar ? t * width * height + p : p * channels + t;
  };
  const step = planar ? 1 : channels;
  const readRow = (y: number, from: number, to: number, into: Float32Array) => {
    for (let c = 0; c < channels; c++) {
      const t = sourceChannel(format, c);
      const s = scale[t]!;
      const o = offset[t]!;
      // Stored as float32, as copyTo rounds it, so every pixel, blended or not, starts from the same value.
      for (let at = first(c, y * width + from), i = c, end = i + (to - from) * channels; i < end; at += step, i += channels) into[i] = (data[at]! - o) / s;
    }
  };
  const copyTo = (region: PixelRect, target: RawImage, x: number, y: number) => {
    if (target.channels !== channels) {
      throw new AtelierError("INTERNAL", `Expected a ${channels}-channel target for a tensor image but received ${target.channels} channels.`);
    }
    for (let c = 0; c < channels; c++) {
      const t = sourceChannel(format, c);
      const s = scale[t]!;
      const o = offset[t]!;
      const out = target.data;
      for (let j = 0; j < region.height; j++) {
        let from = first(c, (region.y + j) * width + region.x);
        let to = ((y + j) * target.width + x) * channels + c;
        const end = from + region.width * step;
        // toSample inlined by hand: this loop writes every output sample of every call.
        for (; from < end; from += step, to += channels) {
          const value = Math.fround((data[from]! - o) / s);
          out[to] = value >= 255 ? 255 : value > 0 ? (value + 0.5) | 0 : 0;
        }
      }
    }
  };
  return { width, height, channels, readRow, copyTo };
}

/**
 * A `[1, H, W, 3]` uint8 output tensor (a byte graph's, byte-image-graph.ts) read as pixels: samples are
 * the bytes, and a region is copied a row at a time.
 */
export function byteTensorImage(tensor: ByteTensor): TensorImage {
  const [batch, height, width, channels] = tensor.dims;
  if (tensor.dims.length !== 4 || batch !== 1 || channels !== 3 || !(height! > 0) || !(width! > 0) || tensor.data.length !== height! * width! * 3) {
    throw new AtelierError("INTERNAL", `Expected a [1, H, W, 3] byte image tensor but received [${tensor.dims.join(", ")}] with ${tensor.data.length} values.`);
  }
  const { data } = tensor;
  const copyTo = (region: PixelRect, target: RawImage, x: number, y: number) => {
    if (target.channels !== 3) throw new AtelierError("INTERNAL", `Expected a 3-channel target for a byte tensor image but received ${target.channels} channels.`);
    for (let j = 0; j < region.height; j++) {
      const from = ((region.y + j) * width! + region.x) * 3;
      target.data.set(data.subarray(from, from + region.width * 3), ((y + j) * target.width + x) * 3);
    }
  };
  const readRow = (y: number, from: number, to: number, into: Float32Array) => into.set(data.subarray((y * width! + from) * 3, (y * width! + to) * 3));
  return { width: width!, height: height!, channels: 3, readRow, copyTo };
}

/**
 * Rounds to the nearest 0..255 sample (halves up); NaN becomes 0. `(value + 0.5) | 0` is Math.round
 * for every float32 value (the sum is exact) and for doubles other than those within an ulp below a
 * half, and V8 runs it about 2.5 times as fast inside the per-sample loops that end every image step.
 */
export function toSample(value: number): number {
  return value >= 255 ? 255 : value > 0 ? (value + 0.5) | 0 : 0;
}

/** A model output tensor as 8-bit pixels: RGB (3 channels) or grey (1 channel, for Y), clamped and rounded. */
export function tensorToImage(tensor: TensorData, format: ImageTensorFormat): RawImage {
  const image = tensorImage(tensor, format);
  const { width, height, channels } = image;
  const out: RawImage = { data: new Uint8Array(width * height * channels), width, height, channels };
  image.copyTo({ x: 0, y: 0, width, height }, out, 0, 0);
  return out;
}

/**
 * How a graph can take and give 8-bit interleaved RGB itself (byte-image-graph.ts) with exactly the
 * values {@link imageToTensor} and {@link tensorToImage} compute, for the formats where that is proven:
 * RGB, one range for every channel starting at 0, no mean or std, and a factor back to samples of 1 or
 * 255. Multiplying a float32 by 255 in float32 gives what `Math.fround(x / (1 / 255))` gives (checked on
 * every 7th float32 from 2^-11 to 2; 255x is exact in a double, so only the final rounding to float32
 * remains, and 1 / 255 is far enough from a double tie that the division lands on the same float32).
 * Undefined for any other format: it keeps the JavaScript conversions.
 */
export interface ByteConversion {
  layout: ImageTensorFormat["layout"];
  /** The tensor value of each sample 0..255, as imageToTensor stores it (one table for all channels). */
  inputTable: Float32Array;
  /** Output tensor values times this (in float32) are the samples before clamping and rounding. */
  outputFactor: number;
}

export function byteConversion(format: ImageTensorFormat): ByteConversion | undefined {
  const [lo, hi] = format.range;
  const plain = (values: readonly number[] | undefined, neutral: number) => values === undefined || values.every((v) => v === neutral);
  if (format.channelOrder !== "RGB" || lo !== 0 || (hi !== 1 && hi !== 255) || !plain(format.mean, 0) || !plain(format.std, 1)) return undefined;
  return { layout: format.layout, inputTable: byteInputTable(format)!, outputFactor: 255 / hi };
}

/**
 * The tensor value of each sample 0..255 exactly as {@link imageToTensor} stores it, for formats that
 * map every channel alike (RGB order, one mean and one std for all): a graph given this table can take
 * the 8-bit pixels and look its input up (byte-image-graph.ts). Undefined for any other format.
 */
export function byteInputTable(format: ImageTensorFormat): Float32Array | undefined {
  if (format.channelOrder !== "RGB") return undefined;
  const { scale, offset } = affine(format);
  if (scale.some((s) => s !== scale[0]) || offset.some((o) => o !== offset[0])) return undefined;
  const table = new Float32Array(256);
  for (let v = 0; v < 256; v++) table[v] = v * scale[0]! + offset[0]!;
  return table;
}
