/**
 * An uploaded image file made into its data URL as it arrives (facade/uploaded-image.ts): whatever
 * the sizes of the chunks, with or without a known size, its text and bytes are the data URL a JSON
 * client would send, its media type read from the file's signature.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { PIECE_BYTES, UploadedImage } from "../../facade/uploaded-image.js";
import { gradientPng } from "../support/test-images.js";

const JPEG_START = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);

/** `bytes` written in chunks of the sizes `sizes` gives, in turn. */
function upload(bytes: Buffer, sizes: (index: number) => number, maxFileBytes?: number) {
  const image = new UploadedImage("image", maxFileBytes);
  for (let at = 0, index = 0; at < bytes.length; index++) {
    const size = Math.max(1, sizes(index));
    image.write(bytes.subarray(at, at + size));
    at += size;
  }
  expect(image.size).toBe(bytes.length);
  return image.finish();
}

describe("an uploaded image file as a data URL", () => {
  const file = Buffer.concat([JPEG_START, randomBytes(3 * PIECE_BYTES + 1234)]);
  const expected = `data:image/jpeg;base64,${file.toString("base64")}`;

  it.each([
    ["one chunk", () => file.length],
    ["chunks of one byte", () => 1],
    ["chunks of 7 bytes", () => 7],
    ["chunks of a piece and one byte", () => PIECE_BYTES + 1],
    ["chunks of varied sizes", (index: number) => [1, 2, 3, 65_536, 100, 49_151][index % 6]!],
  ])("is the data URL of the file when it comes in %s", (_what, sizes) => {
    for (const capacity of [file.length, undefined]) {
      const url = upload(file, sizes, capacity);
      expect(url.text).toBe(expected);
      expect(url.bytes.toString("latin1")).toBe(expected);
    }
  });

  it("grows past its first capacity when the file's size is not known", () => {
    const large = Buffer.concat([JPEG_START, randomBytes(3 * 1024 * 1024)]);
    expect(upload(large, () => 65_536).bytes.equals(Buffer.from(`data:image/jpeg;base64,${large.toString("base64")}`))).toBe(true);
  });

  it("takes its media type from the file's signature", async () => {
    const png = await gradientPng(4, 4);
    expect(upload(png, () => 3).text).toBe(`data:image/png;base64,${png.toString("base64")}`);
  });

  it("refuses a file that is no accepted image, and an empty one, with 422 IMAGE_UNDECODABLE", () => {
    expect(() => upload(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"), () => 5)).toThrow(
      expect.objectContaining({ code: "IMAGE_UNDECODABLE", message: expect.stringMatching(/^The file in part "image" is not an image in a format this server accepts/) as unknown }),
    );
    expect(() => new UploadedImage("replacement", 0).finish()).toThrow(expect.objectContaining({ code: "IMAGE_UNDECODABLE", message: 'The file in part "replacement" is empty.' }));
  });
});
