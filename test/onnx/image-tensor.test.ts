/** Pixels to tensors and back for every layout, channel order, range and normalisation; alpha split/merge. */
import { describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import type { ImageTensorFormat } from "../../models/catalog/catalog-types.js";
import { BACKGROUND_MODELS } from "../../models/catalog/entries/background-models.js";
import { STYLE_MODELS } from "../../models/catalog/entries/style-models.js";
import { UPSCALE_MODELS } from "../../models/catalog/entries/upscale-models.js";
import { mergeAlpha, splitAlpha } from "../../workers/image/alpha.js";
import { imageToTensor, tensorImage, tensorToImage } from "../../workers/image/image-tensor.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import { noiseImage } from "./pixels.js";

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

/** One 2x1 image: a red-ish pixel then a blue-ish one. */
const twoPixels: RawImage = { data: Uint8Array.of(255, 0, 51, 0, 102, 255), width: 2, height: 1, channels: 3 };

describe("image to tensor", () => {
  it("NCHW RGB [0,1] gives one plane per channel", () => {
    const tensor = imageToTensor(twoPixels, { layout: "NCHW", channelOrder: "RGB", range: [0, 1] });
    expect(tensor.dims).toEqual([1, 3, 1, 2]);
    expect([...tensor.data]).toEqual([1, 0, 0, 0.4, 0.2, 1].map(Math.fround));
  });

  it("NHWC BGR [0,255] interleaves in reversed order", () => {
    const tensor = imageToTensor(twoPixels, { layout: "NHWC", channelOrder: "BGR", range: [0, 255] });
    expect(tensor.dims).toEqual([1, 1, 2, 3]);
    expect([...tensor.data]).toEqual([51, 0, 255, 255, 102, 0]);
  });

  it("range [-1,1] with mean and std applies ((v/255)*2 - 1 - mean) / std per tensor channel", () => {
    const tensor = imageToTensor(twoPixels, { layout: "NCHW", channelOrder: "RGB", range: [-1, 1], mean: [0.5, 0, -0.5], std: [2, 1, 0.5] });
    const expected = [
      (1 - 0.5) / 2, (-1 - 0.5) / 2,
      -1, (102 / 255) * 2 - 1,
      ((51 / 255) * 2 - 1 + 0.5) / 0.5, (1 + 0.5) / 0.5,
    ];
    [...tensor.data].forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 6));
  });

  it("Y is BT.601 luma (0.299 R + 0.587 G + 0.114 B)", () => {
    const image: RawImage = { data: Uint8Array.of(255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 10, 20, 30), width: 5, height: 1, channels: 3 };
    const tensor = imageToTensor(image, { layout: "NCHW", channelOrder: "Y", range: [0, 255] });
    expect(tensor.dims).toEqual([1, 1, 1, 5]);
    const expected = [76.245, 149.685, 29.07, 255, 0.299 * 10 + 0.587 * 20 + 0.114 * 30];
    [...tensor.data].forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 3));
  });

  it("Y takes a grey image as is", () => {
    const grey: RawImage = { data: Uint8Array.of(0, 128, 255), width: 3, height: 1, channels: 1 };
    const tensor = imageToTensor(grey, { layout: "NHWC", channelOrder: "Y", range: [0, 1] });
    expect(tensor.dims).toEqual([1, 1, 3, 1]);
    expect([...tensor.data]).toEqual([0, 128 / 255, 1].map(Math.fround));
  });

  it("refuses an RGBA image, naming the channel counts", () => {
    expect(() => imageToTensor(noiseImage(2, 2, 4), { layout: "NCHW", channelOrder: "RGB", range: [0, 1] })).toThrow(
      new AtelierError("INTERNAL", "Expected 3 image channels for channel order RGB but received 4."),
    );
  });

  it("refuses mean/std of the wrong length", () => {
    expect(() => imageToTensor(twoPixels, { layout: "NCHW", channelOrder: "Y", range: [0, 1], mean: [0.5, 0.5, 0.5] })).toThrow(
      "Expected 1 mean and std values for channel order Y but received 3 and 1.",
    );
  });
});

describe("tensor to image round trips", () => {
  const formats: [string, ImageTensorFormat][] = [
    ["NCHW RGB [0,1]", { layout: "NCHW", channelOrder: "RGB", range: [0, 1] }],
    ["NHWC RGB [0,1]", { layout: "NHWC", channelOrder: "RGB", range: [0, 1] }],
    ["NCHW BGR [0,255]", { layout: "NCHW", channelOrder: "BGR", range: [0, 255] }],
    ["NHWC BGR [0,255]", { layout: "NHWC", channelOrder: "BGR", range: [0, 255] }],
    ["NCHW RGB [-1,1]", { layout: "NCHW", channelOrder: "RGB", range: [-1, 1] }],
    ["NCHW RGB ImageNet mean/std", { layout: "NCHW", channelOrder: "RGB", range: [0, 1], mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] }],
    ["NHWC BGR [0,255] mean/std", { layout: "NHWC", channelOrder: "BGR", range: [0, 255], mean: [104, 117, 123], std: [58, 57, 59] }],
    // Every image model in the catalog, with its real pre-processing.
    ...[...BACKGROUND_MODELS, ...STYLE_MODELS, ...UPSCALE_MODELS]
      .filter((entry) => entry.imageFormat && entry.imageFormat.channelOrder !== "Y")
      .map((entry): [string, ImageTensorFormat] => [`catalog ${entry.id}`, entry.imageFormat!]),
  ];

  it.each(formats)("%s gives back the exact pixels", (_label, format) => {
    const image = noiseImage(13, 7);
    const tensor = imageToTensor(image, format);
    const back = tensorToImage(tensor, format);
    expect(back).toMatchObject({ width: 13, height: 7, channels: 3 });
    expect(same(back.data, image.data)).toBe(true);
  });

  it("Y gives back the rounded luma as a grey image", () => {
    const format: ImageTensorFormat = { layout: "NCHW", channelOrder: "Y", range: [0, 1] };
    const back = tensorToImage(imageToTensor(twoPixels, format), format);
    expect(back).toMatchObject({ width: 2, height: 1, channels: 1 });
    expect([...back.data]).toEqual([Math.round(0.299 * 255 + 0.114 * 51), Math.round(0.587 * 102 + 0.114 * 255)]);
  });

  it("clamps and rounds out-of-range outputs, and reads them unclamped before blending", () => {
    const format: ImageTensorFormat = { layout: "NCHW", channelOrder: "RGB", range: [0, 1] };
    const tensor = { data: Float32Array.of(-0.2, 1.3, 0.5, 0.25, Number.NaN, 0.999), dims: [1, 3, 1, 2] };
    expect([...tensorToImage(tensor, format).data]).toEqual([0, 128, 0, 255, 64, 255]);
    const image = tensorImage(tensor, format);
    const row = new Float32Array(6);
    image.readRow(0, 0, 2, row);
    expect(row[0]).toBeCloseTo(-51, 3);
    expect(row[3]).toBeCloseTo(331.5, 3);
    expect(row[2]).toBeNaN();
    image.readRow(0, 1, 2, row);
    expect([...row.subarray(0, 3)].map((v) => Math.round(v * 10) / 10)).toEqual([331.5, 63.8, 254.7]);
  });

  it("refuses a tensor whose shape does not fit the format, naming both", () => {
    const format: ImageTensorFormat = { layout: "NHWC", channelOrder: "RGB", range: [0, 1] };
    expect(() => tensorToImage({ data: new Float32Array(12), dims: [1, 3, 2, 2] }, format)).toThrow(
      "Expected an image tensor of shape [1, H, W, 3] but received [1, 3, 2, 2].",
    );
  });
});

describe("alpha split and merge", () => {
  it("RGBA splits into RGB and alpha and merges back exactly", () => {
    const image = noiseImage(9, 4, 4);
    const { rgb, alpha } = splitAlpha(image);
    expect(rgb.channels).toBe(3);
    expect(alpha).toMatchObject({ width: 9, height: 4, channels: 1 });
    expect(alpha!.data[5]).toBe(image.data[5 * 4 + 3]);
    expect(rgb.data.slice(15, 18)).toEqual(image.data.slice(20, 23));
    expect(same(mergeAlpha(rgb, alpha).data, image.data)).toBe(true);
  });

  it("RGB passes through without alpha", () => {
    const image = noiseImage(3, 3, 3);
    const { rgb, alpha } = splitAlpha(image);
    expect(rgb).toBe(image);
    expect(alpha).toBeUndefined();
    expect(mergeAlpha(rgb, undefined)).toBe(image);
  });

  it("grey becomes RGB; grey + alpha becomes RGB + alpha", () => {
    const grey: RawImage = { data: Uint8Array.of(7, 200), width: 2, height: 1, channels: 1 };
    expect([...splitAlpha(grey).rgb.data]).toEqual([7, 7, 7, 200, 200, 200]);
    const greyAlpha: RawImage = { data: Uint8Array.of(7, 0, 200, 255), width: 2, height: 1, channels: 2 };
    const { rgb, alpha } = splitAlpha(greyAlpha);
    expect([...rgb.data]).toEqual([7, 7, 7, 200, 200, 200]);
    expect([...alpha!.data]).toEqual([0, 255]);
    expect([...mergeAlpha(rgb, alpha).data]).toEqual([7, 7, 7, 0, 200, 200, 200, 255]);
  });

  it("a grey (luma) result merges as RGB", () => {
    const grey: RawImage = { data: Uint8Array.of(9, 90), width: 2, height: 1, channels: 1 };
    expect(mergeAlpha(grey, undefined)).toMatchObject({ channels: 3, data: Uint8Array.of(9, 9, 9, 90, 90, 90) });
  });

  it("refuses an alpha plane of another size", () => {
    const { rgb } = splitAlpha(noiseImage(4, 4, 3));
    const small: RawImage = { data: new Uint8Array(4), width: 2, height: 2, channels: 1 };
    expect(() => mergeAlpha(rgb, small)).toThrow(
      "Expected a 1-channel 4x4 alpha plane but received 2x2x1; resize it to the colour image first.",
    );
  });
});
