/**
 * The style pipeline's own steps, without models: working size, balanced tiling, settings, colour
 * preservation and strength blending.
 */
import { describe, expect, it } from "vitest";
import { LUMA_WEIGHTS } from "../../workers/image/image-tensor.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import { planAxis } from "../../workers/image/tile-grid.js";
import { blendWithOriginal } from "../../workers/style/blend-strength.js";
import { addReflectedMargin, removeMargin } from "../../workers/style/edge-margin.js";
import { keepOriginalColors } from "../../workers/style/preserve-colors.js";
import { ConfigError, loadConfig } from "../../core/config.js";
import { DEFAULT_STYLE_SETTINGS } from "../../workers/style/style-settings.js";
import { balancedTiling, workingSizeFor } from "../../workers/style/working-size.js";
import { noiseImage } from "../onnx/pixels.js";
import { chromaMeans } from "./style-images.js";

describe("working size", () => {
  it.each([
    [{ width: 451, height: 300 }, 1024, { width: 451, height: 300 }],
    [{ width: 1024, height: 1024 }, 1024, { width: 1024, height: 1024 }],
    [{ width: 4000, height: 3000 }, 1024, { width: 1024, height: 768 }],
    [{ width: 3000, height: 4000 }, 1024, { width: 768, height: 1024 }],
    [{ width: 1001, height: 333 }, 500, { width: 500, height: 166 }],
    [{ width: 5000, height: 3 }, 100, { width: 100, height: 1 }],
  ])("%j at %i → %j", (source, workingSize, expected) => {
    expect(workingSizeFor(source, workingSize)).toEqual(expected);
  });
});

describe("balanced tiling", () => {
  const geometry = { sizeMultiple: 4, tileOverlap: 64 };

  it("keeps an image that fits in one tile whole", () => {
    expect(balancedTiling({ width: 1024, height: 700 }, geometry, 1024)).toEqual({ sizeMultiple: 4 });
  });

  it.each([
    [1024, 691, 512],
    [2000, 1500, 1024],
    [1030, 1030, 1024],
    [777, 333, 256],
    [4096, 130, 512],
  ])("splits %ix%i into even tiles of at most %i px, with no sliver", (width, height, maxTile) => {
    const tiling = balancedTiling({ width, height }, geometry, maxTile);
    const tile = tiling.tileSize!;
    expect(tile % 4).toBe(0);
    expect(tile).toBeLessThanOrEqual(maxTile);
    for (const length of [width, height]) {
      const tiles = planAxis(length, { tile, overlap: tiling.tileOverlap!, multiple: 4, fixed: false });
      // No more tiles than the plain maxTile grid would use …
      expect(tiles.length).toBeLessThanOrEqual(planAxis(length, { tile: maxTile, overlap: 64, multiple: 4, fixed: false }).length);
      // … and the last is not a sliver: at least half as long as the others (when there are several).
      if (tiles.length > 1) expect(tiles.at(-1)!.length).toBeGreaterThanOrEqual(tile / 2);
    }
  });
});

describe("reflected edge margin", () => {
  const row: RawImage = { data: Uint8Array.of(10, 20, 30, 40), width: 4, height: 1, channels: 1 };

  it("mirrors without repeating the edge, on every side", () => {
    const framed = addReflectedMargin(row, 2);
    expect([framed.width, framed.height]).toEqual([8, 5]);
    expect([...framed.data.subarray(2 * 8, 3 * 8)]).toEqual([30, 20, 10, 20, 30, 40, 30, 20]);
    // One row mirrored vertically is itself.
    expect([...framed.data.subarray(0, 8)]).toEqual([30, 20, 10, 20, 30, 40, 30, 20]);
  });

  it("mirrors every pixel of the margin, colour images and margins wider than the image included", () => {
    // Reference: each framed pixel looked up on its own (…c b | a b c… on both axes).
    const mirror = (position: number, size: number) => {
      if (size === 1) return 0;
      const period = 2 * (size - 1);
      const folded = ((position % period) + period) % period;
      return folded < size ? folded : period - folded;
    };
    for (const [width, height, margin] of [[7, 5, 3], [5, 3, 9], [1, 4, 2]] as const) {
      const image = noiseImage(width, height, 3);
      const framed = addReflectedMargin(image, margin);
      const expected = new Uint8Array(framed.data.length);
      for (let y = 0; y < framed.height; y++) {
        for (let x = 0; x < framed.width; x++) {
          const from = (mirror(y - margin, height) * width + mirror(x - margin, width)) * 3;
          for (let c = 0; c < 3; c++) expected[(y * framed.width + x) * 3 + c] = image.data[from + c]!;
        }
      }
      expect(Buffer.from(framed.data).equals(Buffer.from(expected))).toBe(true);
    }
  });

  it("handles margins larger than the image, and comes back exactly", () => {
    const image = noiseImage(5, 3);
    const framed = addReflectedMargin(image, 9);
    expect([framed.width, framed.height]).toEqual([23, 21]);
    expect(removeMargin(framed, 9)).toEqual(image);
    expect(addReflectedMargin(image, 0)).toBe(image);
  });
});

describe("style settings", () => {
  it("come from the configuration, defaulting to a 1024 px working size and 1024 px tiles", () => {
    expect(loadConfig({}).style).toEqual(DEFAULT_STYLE_SETTINGS);
    expect(DEFAULT_STYLE_SETTINGS).toEqual({ workingSize: 1024, tileSize: 1024 });
    expect(loadConfig({ ATELIER_STYLE_WORKING_SIZE: "1536", ATELIER_STYLE_TILE_SIZE: "768" }).style).toEqual({ workingSize: 1536, tileSize: 768 });
  });

  it("reports every bad value together", () => {
    let error: unknown;
    try {
      loadConfig({ ATELIER_STYLE_WORKING_SIZE: "big", ATELIER_STYLE_TILE_SIZE: "64" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(2);
    expect((error as ConfigError).message).toMatch(/ATELIER_STYLE_WORKING_SIZE[\s\S]*ATELIER_STYLE_TILE_SIZE/);
  });
});

const luma = (image: RawImage, p: number) =>
  LUMA_WEIGHTS[0] * image.data[p * 3]! + LUMA_WEIGHTS[1] * image.data[p * 3 + 1]! + LUMA_WEIGHTS[2] * image.data[p * 3 + 2]!;

describe("preserve colours", () => {
  // A muted orange photo and a "painting" that is bright blue with strong texture.
  const photo: RawImage = { ...noiseImage(40, 30), data: noiseImage(40, 30).data.map((v, i) => [150, 110, 70][i % 3]! + (v % 20)) };
  const painting: RawImage = { ...noiseImage(40, 30, 3, 7), data: noiseImage(40, 30, 3, 7).data.map((v, i) => (i % 3 === 2 ? 200 : 40) + (v % 50)) };

  it("keeps the photo's chroma and takes the painting's texture", () => {
    const kept = keepOriginalColors(photo, painting);
    const [photoCb, photoCr] = chromaMeans(photo);
    const [keptCb, keptCr] = chromaMeans(kept);
    const [paintingCb] = chromaMeans(painting);
    expect(Math.abs(keptCb - photoCb)).toBeLessThan(0.5);
    expect(Math.abs(keptCr - photoCr)).toBeLessThan(0.5);
    expect(Math.abs(paintingCb - photoCb)).toBeGreaterThan(30);
    // The luma pattern is the painting's (rescaled): correlation close to 1.
    const pixels = photo.width * photo.height;
    const a = Array.from({ length: pixels }, (_, p) => luma(kept, p));
    const b = Array.from({ length: pixels }, (_, p) => luma(painting, p));
    const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
    const [ma, mb] = [mean(a), mean(b)];
    const cov = mean(a.map((x, i) => (x - ma) * (b[i]! - mb)));
    const sd = (v: number[], m: number) => Math.sqrt(mean(v.map((x) => (x - m) ** 2)));
    expect(cov / (sd(a, ma) * sd(b, mb))).toBeGreaterThan(0.98);
  });

  it("refuses images of different sizes", () => {
    expect(() => keepOriginalColors(photo, noiseImage(4, 4))).toThrow(/same size|one size/);
  });
});

describe("strength", () => {
  const photo = noiseImage(20, 10, 3, 3);
  const painting = noiseImage(20, 10, 3, 4);

  it("0 is the photo, 1 the painting, 0.5 the midpoint (rounded)", () => {
    expect(blendWithOriginal(photo, painting, 0).data).toEqual(photo.data);
    expect(blendWithOriginal(photo, painting, 1)).toBe(painting);
    const half = blendWithOriginal(photo, painting, 0.5);
    for (let i = 0; i < half.data.length; i++) expect(Math.abs(half.data[i]! - (photo.data[i]! + painting.data[i]!) / 2)).toBeLessThanOrEqual(0.5);
  });
});
