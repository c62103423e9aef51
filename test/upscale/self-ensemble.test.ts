/** Self-ensemble: the eight orientations and their inverses, and the mean over them. */
import { describe, expect, it } from "vitest";
import type { RawImage } from "../../workers/image/raw-image.js";
import { ORIENTATIONS, orient, selfEnsemble } from "../../workers/upscale/self-ensemble.js";

/** A 3x2 RGB image whose samples are all different, so any misplaced sample shows. */
const image: RawImage = { data: Uint8Array.from({ length: 3 * 2 * 3 }, (_, i) => i * 7), width: 3, height: 2, channels: 3 };

/** Nearest-neighbour x2 enlargement: the same in every orientation. */
async function nearestX2(source: RawImage): Promise<RawImage> {
  const { width, height, channels } = source;
  const data = new Uint8Array(width * height * 4 * channels);
  for (let y = 0; y < height * 2; y++) {
    for (let x = 0; x < width * 2; x++) {
      for (let c = 0; c < channels; c++) data[(y * width * 2 + x) * channels + c] = source.data[((y >> 1) * width + (x >> 1)) * channels + c]!;
    }
  }
  return { data, width: width * 2, height: height * 2, channels };
}

describe("orient", () => {
  it("gives eight different orientations, each undone by its inverse", () => {
    const seen = new Set<string>();
    for (const k of ORIENTATIONS) {
      const turned = orient(image, k);
      expect([turned.width, turned.height]).toEqual(k & 4 ? [2, 3] : [3, 2]);
      seen.add(Buffer.from(turned.data).toString("hex") + turned.width);
      expect(orient(turned, k, true)).toEqual(image);
    }
    expect(seen.size).toBe(8);
  });

  it("mirrors left-right for k = 1 and transposes for k = 4", () => {
    const grey: RawImage = { data: Uint8Array.from([1, 2, 3, 4, 5, 6]), width: 3, height: 2, channels: 1 };
    expect(Array.from(orient(grey, 1).data)).toEqual([3, 2, 1, 6, 5, 4]);
    expect(Array.from(orient(grey, 4).data)).toEqual([1, 4, 2, 5, 3, 6]);
  });
});

describe("selfEnsemble", () => {
  it("returns the single result for an operation that does not depend on orientation", async () => {
    expect(await selfEnsemble(image, nearestX2)).toEqual(await nearestX2(image));
  });

  it("averages an operation that does depend on it into one that does not", async () => {
    // Brightens the top-left sample only: which sample that is depends on the orientation.
    const marksCorner = async (source: RawImage) => {
      const data = Uint8Array.from(source.data);
      data[0] = 255;
      return { ...source, data };
    };
    const grey: RawImage = { data: new Uint8Array(9), width: 3, height: 3, channels: 1 };
    // Each corner is the top-left of two of the eight orientations: 255 * 2 / 8, rounded.
    expect(Array.from((await selfEnsemble(grey, marksCorner)).data)).toEqual([64, 0, 64, 0, 0, 0, 64, 0, 64]);
  });
});
