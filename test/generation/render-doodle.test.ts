/** Rendering the doodle model's 28x28 map as a pen drawing: smooth, anti-aliased, centred, reproducible. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { distanceField } from "../../workers/generation/doodle/distance-field.js";
import { DOODLE_STYLE, renderDoodle } from "../../workers/generation/doodle/render-doodle.js";
import { resampleMap } from "../../workers/generation/doodle/resample-map.js";
import { dropSpecks, thinToLines, type BitMap } from "../../workers/generation/doodle/stroke-skeleton.js";
import { blockiness, greyLevels, inkBox, nearestNeighbourDrawing, syntheticDoodleMap } from "./drawing-measures.js";

const map = syntheticDoodleMap();

describe("renderDoodle", () => {
  it("draws dark anti-aliased strokes on white paper", () => {
    const image = renderDoodle(map, 256, 256);
    expect(image).toMatchObject({ width: 256, height: 256, channels: 1 });
    expect(image.data[0]).toBe(255);
    expect(Math.min(...image.data)).toBe(DOODLE_STYLE.ink);
    expect(greyLevels(image)).toBeGreaterThan(16);
    const dark = image.data.filter((value) => value < 128).length / image.data.length;
    expect(dark).toBeGreaterThan(0.01);
    expect(dark).toBeLessThan(0.2);
  });

  it("has no 8x8 blocks, unlike a nearest-neighbour upscale", () => {
    const flat = { ...DOODLE_STYLE, margin: 0 };
    const smooth = renderDoodle(map, 224, 224, flat);
    const blocky = nearestNeighbourDrawing(map, 8);
    expect(greyLevels(blocky)).toBe(2);
    expect(blockiness(blocky, 8)).toBe(1);
    expect(blockiness(smooth, 8)).toBeLessThan(0.3);
  });

  it("keeps the drawing square, centred, inside the margin of any canvas", () => {
    for (const [width, height] of [[400, 200], [200, 400], [1024, 1024], [28, 28]] as const) {
      const image = renderDoodle(map, width, height);
      const box = inkBox(image)!;
      const side = Math.min(width, height);
      const margin = Math.floor(side * DOODLE_STYLE.margin);
      expect(box.left, `${width}x${height}`).toBeGreaterThanOrEqual(margin - 1);
      expect(box.top, `${width}x${height}`).toBeGreaterThanOrEqual(margin - 1);
      expect(width - 1 - box.right, `${width}x${height}`).toBeGreaterThanOrEqual(margin - 1);
      expect(height - 1 - box.bottom, `${width}x${height}`).toBeGreaterThanOrEqual(margin - 1);
      // The ring is centred horizontally; its ink width scales with the shorter side, not the longer.
      const centre = (box.left + box.right) / 2;
      expect(Math.abs(centre - (width - 1) / 2), `${width}x${height}`).toBeLessThan(side * 0.05);
      expect((box.right - box.left) / side, `${width}x${height}`).toBeGreaterThan(0.45);
      expect((box.right - box.left) / side, `${width}x${height}`).toBeLessThan(0.75);
    }
  });

  it("draws one pen width whatever the stroke's width in the map", () => {
    const image = renderDoodle(map, 512, 512);
    // Across the ring's left side at its centre row (map row 12), the stroke is about penWidth x side.
    const side = Math.round(512 * (1 - 2 * DOODLE_STYLE.margin));
    const row = Math.floor((512 - side) / 2) + Math.round(((12 + 0.5) * side) / 28);
    let run = 0;
    let longest = 0;
    for (let x = 0; x < 256; x++) {
      run = image.data[row * 512 + x]! < 128 ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    const pen = DOODLE_STYLE.penWidth * side;
    expect(longest).toBeGreaterThan(pen * 0.6);
    expect(longest).toBeLessThan(pen * 2);
  });

  it("gives the same pixels for the same map", () => {
    expect(renderDoodle(map, 300, 200).data).toEqual(renderDoodle(map, 300, 200).data);
  });

  it("draws the very pixels it always has: a change of how the steps run must not change a drawing", () => {
    const digest = (width: number, height: number) => createHash("sha256").update(renderDoodle(map, width, height).data).digest("hex");
    expect(digest(256, 256)).toBe("7ce78323e85939d9682613d9bc78e80efae890f277d8d77625467af02c66492f");
    expect(digest(300, 200)).toBe("b91aa7544c65dc83c9006e3d6b1816300c5f02662c6f89972e1982cebae839f3");
    expect(digest(64, 64)).toBe("e815509f073309115c1da4f43a78d56d878dadb272546191a97530a0313aac0e");
  });
});

describe("drawing steps", () => {
  it("resamples a constant map to the same constant, up and down", () => {
    const flat = { data: new Float32Array(28 * 28).fill(0.7), width: 28, height: 28 };
    for (const size of [10, 28, 100]) {
      for (const value of resampleMap(flat, size, size, "catmull-rom").data) expect(value).toBeCloseTo(0.7, 5);
    }
  });

  it("thins a filled bar to a one-pixel line and drops specks", () => {
    const width = 40;
    const bits: BitMap = { data: new Uint8Array(width * 20), width, height: 20 };
    for (let y = 6; y < 13; y++) for (let x = 5; x < 35; x++) bits.data[y * width + x] = 1;
    bits.data[2 * width + 2] = 1;
    thinToLines(bits);
    dropSpecks(bits, 3);
    const rows = new Set<number>();
    for (let i = 0; i < bits.data.length; i++) if (bits.data[i]) rows.add(Math.floor(i / width));
    expect(rows.size).toBe(1);
    expect([...rows][0]).toBeGreaterThanOrEqual(8);
    expect([...rows][0]).toBeLessThanOrEqual(10);
    expect(bits.data[2 * width + 2]).toBe(0);
  });

  it("measures Euclidean distances to the nearest set pixel", () => {
    const bits: BitMap = { data: new Uint8Array(10 * 10), width: 10, height: 10 };
    bits.data[3 * 10 + 4] = 1;
    const field = distanceField(bits);
    expect(field.data[3 * 10 + 4]).toBe(0);
    expect(field.data[7 * 10 + 7]).toBeCloseTo(5, 5);
    expect(field.data[0]).toBeCloseTo(5, 5);
  });
});
