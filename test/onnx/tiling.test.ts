/**
 * Tiled inference: exact reassembly for awkward sizes, exact nearest-neighbour upscaling, blended
 * seams, fixed-size networks, bounded tile size, cancellation; then the same through onnxruntime with
 * tiny generated models and, when the mirror is present, a real 4x network.
 */
import fs from "node:fs/promises";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import type { ImageTensorFormat, InferenceGeometry } from "../../models/catalog/catalog-types.js";
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import type { ByteTensor, TensorData } from "../../workers/onnx/tensor-data.js";
import { imageToTensor, tensorToImage, toSample } from "../../workers/image/image-tensor.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import { blendWeights, planAxis } from "../../workers/image/tile-grid.js";
import { runTiled, runTiledBytes, type TileGeometry } from "../../workers/image/tiling.js";
import { withProgress } from "../../workers/work-progress.js";
import { hasMirrorModel, hasTestPhotos, mirrorPath, testPhoto } from "../support/test-assets.js";
import { flatImage, nearestUpscale, noiseImage, psnr } from "./pixels.js";
import { fixedIdentityModel, nearest2xModel } from "./tiny-models.js";

const RGB255: ImageTensorFormat = { layout: "NCHW", channelOrder: "RGB", range: [0, 255] };

const identity = async (tile: TensorData) => tile;

/** Nearest-neighbour upscale of an NCHW tensor: what a 2x pixel-replicating network returns. */
function upscaleTensor(tile: TensorData, factor: number): TensorData {
  const [n, c, h, w] = tile.dims as [number, number, number, number];
  const data = new Float32Array(n * c * h * factor * w * factor);
  for (let ch = 0; ch < c; ch++) {
    for (let y = 0; y < h * factor; y++) {
      for (let x = 0; x < w * factor; x++) {
        data[(ch * h * factor + y) * w * factor + x] = tile.data[(ch * h + Math.floor(y / factor)) * w + Math.floor(x / factor)]!;
      }
    }
  }
  return { data, dims: [n, c, h * factor, w * factor] };
}

/** Largest absolute difference between horizontally or vertically adjacent samples. */
function largestStep(image: RawImage): number {
  const { width, height, channels, data } = image;
  let largest = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        const here = data[(y * width + x) * channels + c]!;
        if (x + 1 < width) largest = Math.max(largest, Math.abs(data[(y * width + x + 1) * channels + c]! - here));
        if (y + 1 < height) largest = Math.max(largest, Math.abs(data[((y + 1) * width + x) * channels + c]! - here));
      }
    }
  }
  return largest;
}

const SIZES: [number, number][] = [
  [1, 1],
  [7, 5],
  [130, 67],
];

const GEOMETRIES: [string, InferenceGeometry | undefined][] = [
  ["one tile", undefined],
  ["16px tiles, no overlap", { tileSize: 16 }],
  ["16px tiles, overlap 4", { tileSize: 16, tileOverlap: 4 }],
  ["16px tiles, overlap 8 (half)", { tileSize: 16, tileOverlap: 8 }],
  ["tiles larger than the image", { tileSize: 256, tileOverlap: 16 }],
  ["18px tiles, multiple of 4, overlap 3", { tileSize: 18, tileOverlap: 3, sizeMultiple: 4 }],
  ["fixed 8x8, overlap 2", { fixedSize: [8, 8], tileOverlap: 2 }],
  ["fixed 24x12, overlap 5", { fixedSize: [24, 12], tileOverlap: 5 }],
];

/** Checks each tile against the geometry rules, then passes it to `model`. */
function checkedModel(geometry: InferenceGeometry | undefined, model: (tile: TensorData) => Promise<TensorData>) {
  return async (tile: TensorData, where: TileGeometry) => {
    const [, channels, height, width] = tile.dims;
    expect(channels).toBe(3);
    expect([width, height]).toEqual([where.paddedWidth, where.paddedHeight]);
    if (geometry?.fixedSize) expect([width, height]).toEqual(geometry.fixedSize);
    if (geometry?.sizeMultiple) {
      expect(width! % geometry.sizeMultiple).toBe(0);
      expect(height! % geometry.sizeMultiple).toBe(0);
    }
    if (geometry?.tileSize && !geometry.fixedSize) expect(Math.max(width!, height!)).toBeLessThanOrEqual(Math.max(geometry.tileSize, geometry.sizeMultiple ?? 1));
    return model(tile);
  };
}

describe("tiled inference with an identity model", () => {
  for (const [label, geometry] of GEOMETRIES) {
    it.each(SIZES)(`reassembles %ix%i exactly (${label})`, async (width, height) => {
      const image = noiseImage(width, height);
      const result = await runTiled(image, { format: RGB255, scale: 1, geometry, runTile: checkedModel(geometry, identity) });
      expect(result).toMatchObject({ width, height, channels: 3 });
      expect(Buffer.from(result.data).equals(Buffer.from(image.data))).toBe(true);
    });
  }

  it("reassembles exactly with replicated edges and normalised input formats", async () => {
    const image = noiseImage(45, 29);
    const format: ImageTensorFormat = { layout: "NHWC", channelOrder: "BGR", range: [-1, 1], mean: [0.1, -0.2, 0.3], std: [0.5, 0.6, 0.7] };
    const result = await runTiled(image, { format, scale: 1, edge: "replicate", geometry: { tileSize: 12, tileOverlap: 5 }, runTile: identity });
    expect(Buffer.from(result.data).equals(Buffer.from(image.data))).toBe(true);
  });

  it("gives the luma plane for a Y network", async () => {
    const image = noiseImage(33, 21);
    const format: ImageTensorFormat = { layout: "NCHW", channelOrder: "Y", range: [0, 1] };
    const whole = tensorToImage(imageToTensor(image, format), format);
    const tiled = await runTiled(image, { format, scale: 1, geometry: { tileSize: 10, tileOverlap: 3 }, runTile: identity });
    expect(tiled.channels).toBe(1);
    expect(Buffer.from(tiled.data).equals(Buffer.from(whole.data))).toBe(true);
  });
});

describe("tiled inference with a 2x nearest model", () => {
  for (const [label, geometry] of GEOMETRIES) {
    it.each(SIZES)(`gives the exact nearest-neighbour upscale of %ix%i (${label})`, async (width, height) => {
      const image = noiseImage(width, height, 3, width * height);
      const result = await runTiled(image, {
        format: RGB255,
        scale: 2,
        geometry,
        runTile: checkedModel(geometry, async (tile) => upscaleTensor(tile, 2)),
      });
      const expected = nearestUpscale(image, 2);
      expect(result).toMatchObject({ width: width * 2, height: height * 2, channels: 3 });
      expect(Buffer.from(result.data).equals(Buffer.from(expected.data))).toBe(true);
    });
  }
});

describe("seams between tiles", () => {
  // Each tile brightens the image by 20 more than its left or upper neighbour: a model whose output
  // depends on where the tile is, as real networks' outputs do near tile borders.
  const OFFSET = 20;
  const perTileOffset = async (tile: TensorData, where: TileGeometry) => {
    const shifted = upscaleTensor(tile, 2);
    const add = OFFSET * (where.column + where.row);
    return { data: shifted.data.map((v) => v + add), dims: shifted.dims };
  };
  const image = flatImage(100, 70, 100);

  it("are blended: no jump larger than the offset spread over the overlap", async () => {
    const overlap = 8;
    const scale = 2;
    const result = await runTiled(image, { format: RGB255, scale, geometry: { tileSize: 32, tileOverlap: overlap }, runTile: perTileOffset });
    // A linear ramp over `overlap * scale` output pixels moves at most OFFSET / 16 = 1.25 per pixel
    // along one axis; rounding adds at most 1.
    expect(largestStep(result)).toBeLessThanOrEqual(Math.ceil(OFFSET / (overlap * scale)) + 1);
    // Away from any overlap, each tile's own value is kept exactly: tile (0,0) interior and tile (1,1) interior.
    expect(result.data[(10 * result.width + 10) * 3]).toBe(100);
    expect(result.data[((24 * 2 + 20) * result.width + 24 * 2 + 20) * 3]).toBe(100 + 2 * OFFSET);
  });

  it("show as hard jumps without overlap (the measure above detects seams)", async () => {
    const result = await runTiled(image, { format: RGB255, scale: 2, geometry: { tileSize: 32 }, runTile: perTileOffset });
    expect(largestStep(result)).toBe(OFFSET);
  });
});

describe("pixels outside the overlaps", () => {
  it("are rounded straight from their tile, equal to blending every pixel of every tile", async () => {
    const image = noiseImage(70, 45, 3, 9);
    const scale = 2;
    const tiles: { where: TileGeometry; output: TensorData }[] = [];
    // Tiles disagree (an offset per tile) and carry fractions, so a blended pixel matches neither tile.
    const model = async (tile: TensorData, where: TileGeometry) => {
      const shifted = upscaleTensor(tile, scale);
      const output = { data: shifted.data.map((v, i) => v * 0.9 + 7 * where.column + 11 * where.row + (i % 7) / 8), dims: shifted.dims };
      tiles.push({ where, output });
      return output;
    };
    const result = await runTiled(image, { format: RGB255, scale, geometry: { tileSize: 24, tileOverlap: 6 }, runTile: model });

    // Reference: every pixel of every tile, weighted, summed over the whole image in float64, rounded.
    const columns = planAxis(70, { tile: 24, overlap: 6, multiple: 1, fixed: false });
    const rows = planAxis(45, { tile: 24, overlap: 6, multiple: 1, fixed: false });
    const sums = new Float64Array(result.data.length);
    const covering = new Uint8Array(result.width * result.height);
    for (const { where, output } of tiles) {
      const wx = blendWeights(columns[where.column]!, scale);
      const wy = blendWeights(rows[where.row]!, scale);
      const tileWidth = where.paddedWidth * scale;
      const plane = tileWidth * where.paddedHeight * scale;
      for (let j = 0; j < where.height * scale; j++) {
        for (let i = 0; i < where.width * scale; i++) {
          const p = (where.y * scale + j) * result.width + where.x * scale + i;
          covering[p]!++;
          for (let c = 0; c < 3; c++) sums[p * 3 + c]! += wy[j]! * wx[i]! * output.data[c * plane + j * tileWidth + i]!;
        }
      }
    }
    let single = 0;
    let blended = 0;
    for (let p = 0; p < covering.length; p++) {
      for (let c = 0; c < 3; c++) {
        const expected = toSample(sums[p * 3 + c]!);
        const actual = result.data[p * 3 + c]!;
        // One tile: weight 1, exactly its value. Several: the streaming sums keep float32 partials.
        if (covering[p] === 1) expect(actual, `pixel ${p} channel ${c}`).toBe(expected);
        else expect(Math.abs(actual - expected), `blended pixel ${p} channel ${c}`).toBeLessThanOrEqual(1);
      }
      if (covering[p] === 1) single++;
      else blended++;
    }
    expect(tiles).toHaveLength(4 * 3);
    expect(single).toBeGreaterThan(blended);
    expect(blended).toBeGreaterThan(covering.length / 5);
  });
});

/** Nearest-neighbour upscale of a `[1, H, W, 3]` byte tile, each sample mapped by `value`. */
function upscaleBytes(tile: ByteTensor, factor: number, value: (sample: number) => number = (v) => v): ByteTensor {
  const [n, h, w, c] = tile.dims as [number, number, number, number];
  const data = new Uint8Array(n * h * factor * w * factor * c);
  for (let y = 0; y < h * factor; y++) {
    for (let x = 0; x < w * factor; x++) {
      for (let ch = 0; ch < c; ch++) data[(y * w * factor + x) * c + ch] = value(tile.data[(Math.floor(y / factor) * w + Math.floor(x / factor)) * c + ch]!);
    }
  }
  return { data, dims: [n, h * factor, w * factor, c] };
}

describe("tiled inference with bytes in and out", () => {
  const BYTE_GEOMETRIES = GEOMETRIES.filter(([, geometry]) => !geometry?.fixedSize);
  for (const [label, geometry] of BYTE_GEOMETRIES) {
    it.each(SIZES)(`gives the exact nearest-neighbour upscale of %ix%i (${label})`, async (width, height) => {
      const image = noiseImage(width, height, 3, width + height);
      const result = await runTiledBytes(image, {
        scale: 2,
        geometry,
        runTile: async (tile, where) => {
          expect(tile.dims).toEqual([1, where.paddedHeight, where.paddedWidth, 3]);
          return upscaleBytes(tile, 2);
        },
      });
      expect(result).toMatchObject({ width: width * 2, height: height * 2, channels: 3 });
      expect(Buffer.from(result.data).equals(Buffer.from(nearestUpscale(image, 2).data))).toBe(true);
    });
  }

  it("differs from blending the float outputs by at most 1, and only inside the overlap bands", async () => {
    const image = noiseImage(90, 61, 3, 4);
    const scale = 2;
    const geometry = { tileSize: 32, tileOverlap: 8 };
    // Tiles disagree and carry fractions: the float model's output, and the same rounded as a byte graph rounds it.
    const offset = (where: TileGeometry) => 0.37 + 9.3 * where.column + 5.1 * where.row;
    const floats = await runTiled(image, {
      format: RGB255,
      scale,
      geometry,
      runTile: async (tile, where) => {
        const shifted = upscaleTensor(tile, scale);
        return { data: shifted.data.map((v) => v * 0.8 + offset(where)), dims: shifted.dims };
      },
    });
    const bytes = await runTiledBytes(image, {
      scale,
      geometry,
      runTile: async (tile, where) => upscaleBytes(tile, scale, (v) => toSample(Math.fround(Math.fround(v * 0.8) + Math.fround(offset(where))))),
    });
    const columns = planAxis(90, { tile: 32, overlap: 8, multiple: 1, fixed: false });
    const rows = planAxis(61, { tile: 32, overlap: 8, multiple: 1, fixed: false });
    const inBand = (tiles: typeof columns, at: number) => tiles.some((tile) => tile.overlapAfter > 0 && at >= (tile.start + tile.length - tile.overlapAfter) * scale && at < (tile.start + tile.length) * scale);
    let differing = 0;
    let blended = 0;
    for (let y = 0; y < bytes.height; y++) {
      for (let x = 0; x < bytes.width; x++) {
        const band = inBand(columns, x) || inBand(rows, y);
        if (band) blended++;
        for (let c = 0; c < 3; c++) {
          const i = (y * bytes.width + x) * 3 + c;
          const d = Math.abs(bytes.data[i]! - floats.data[i]!);
          if (d > 0) differing++;
          if (band) expect(d, `blended sample ${i}`).toBeLessThanOrEqual(1);
          else expect(d, `sample ${i} outside the overlaps`).toBe(0);
        }
      }
    }
    // The blend of rounded samples does move some samples, and the bands are a real share of the image.
    expect(differing).toBeGreaterThan(0);
    expect(blended).toBeGreaterThan(bytes.width * bytes.height * 0.2);
  });

  it("refuses an image that is not RGB", async () => {
    const run = runTiledBytes(noiseImage(20, 20, 1), { scale: 1, geometry: { tileSize: 16 }, runTile: async (tile) => tile });
    await expect(run).rejects.toThrow("Expected an RGB image for a byte graph but received 1 channels.");
  });
});

describe("bounds and failures", () => {
  it("never hands the network more than one tile, however large the image", async () => {
    let largest = 0;
    let tiles = 0;
    const image = flatImage(1000, 700, 50);
    const result = await runTiled(image, {
      format: RGB255,
      scale: 2,
      geometry: { tileSize: 64, tileOverlap: 8 },
      runTile: async (tile) => {
        tiles++;
        largest = Math.max(largest, tile.data.length);
        return upscaleTensor(tile, 2);
      },
    });
    expect(largest).toBe(3 * 64 * 64);
    // 1000 px in steps of 56 needs 18 columns, 700 px needs 13 rows.
    expect(tiles).toBe(18 * 13);
    expect(result).toMatchObject({ width: 2000, height: 1400 });
  });

  it("stops between tiles when the signal aborts", async () => {
    const controller = new AbortController();
    let calls = 0;
    const run = runTiled(noiseImage(40, 40), {
      format: RGB255,
      scale: 1,
      geometry: { tileSize: 16 },
      signal: controller.signal,
      runTile: async (tile) => {
        calls++;
        controller.abort();
        return tile;
      },
    });
    await expect(run).rejects.toMatchObject({ code: "CANCELLED" });
    expect(calls).toBe(1);
  });

  it("asks for each tile's run two tiles ahead, before assembling the tile before it", async () => {
    const events: string[] = [];
    await withProgress(
      (step) => events.push(`assembling ${step - 1}`),
      () =>
        runTiledBytes(noiseImage(40, 20), {
          scale: 1,
          geometry: { tileSize: 16, tileOverlap: 4 },
          runTile: async (tile, where) => {
            events.push(`run ${where.row * 3 + where.column}`);
            return tile;
          },
        }),
    );
    // 3 columns x 2 rows: run k+1 runs while tile k is assembled, so the network never waits on blending,
    // and run k+2 already waits for the session when run k+1 ends.
    expect(events).toEqual(["run 0", "run 1", "run 2", "assembling 0", "run 3", "assembling 1", "run 4", "assembling 2", "run 5", "assembling 3", "assembling 4", "assembling 5"]);
  });

  it("leaves no run unobserved when a tile is refused while the next ones run", async () => {
    let calls = 0;
    const run = runTiled(noiseImage(40, 40), {
      format: RGB255,
      scale: 2,
      geometry: { tileSize: 16 },
      runTile: async (tile) => {
        calls++;
        if (calls > 1) throw new Error("the next tile failed too");
        return tile;
      },
    });
    // The first tile has the wrong size; the next two, already asked for, fail later and are not reported unhandled.
    await expect(run).rejects.toThrow("Expected a 32x32 output tile");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toBe(3);
  });

  it("leaves no run unobserved when the run ahead is refused while the current one still runs", async () => {
    // A cancelled call's next run leaves the session's gate at once, while the run before it is still
    // on the inference thread: that refusal must wait for the tiling to reach it, not surface unhandled.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", record);
    try {
      const run = runTiled(noiseImage(40, 40), {
        format: RGB255,
        scale: 1,
        geometry: { tileSize: 16 },
        runTile: async (tile, where) => {
          if (where.column === 0 && where.row === 0) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            return tile;
          }
          throw new AtelierError("CANCELLED", "The call was cancelled.");
        },
      });
      await expect(run).rejects.toMatchObject({ code: "CANCELLED" });
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off("unhandledRejection", record);
    }
    expect(unhandled).toEqual([]);
  });

  it("refuses an output tile of the wrong size, naming both sizes", async () => {
    const run = runTiled(noiseImage(20, 20), { format: RGB255, scale: 2, geometry: { tileSize: 16 }, runTile: identity });
    await expect(run).rejects.toThrow(new AtelierError("INTERNAL", "Expected a 32x32 output tile for a 16x16 input tile at scale 2 but received 16x16."));
  });

  it("refuses an overlap over half a tile", async () => {
    const run = runTiled(noiseImage(40, 40), { format: RGB255, scale: 1, geometry: { tileSize: 16, tileOverlap: 9 }, runTile: identity });
    await expect(run).rejects.toThrow("Expected integer between 0 and 8 for tile overlap (tile 16) but received 9.");
  });
});

describe("tiled inference through onnxruntime", () => {
  const runtime = new ModelRuntime({
    threads: 2,
    memoryBudgetBytes: 256 * 1024 * 1024,
    logger: { debug: () => undefined, info: () => undefined, warn: () => undefined },
  });
  afterAll(() => runtime.dispose());

  it("a Resize (nearest, 2x) model upscales a photograph exactly like pixel replication", async () => {
    const photo = hasTestPhotos()
      ? await sharp(testPhoto("chelsea.png")).extract({ left: 100, top: 60, width: 150, height: 97 }).removeAlpha().raw().toBuffer({ resolveWithObject: true })
      : undefined;
    const image: RawImage = photo ? { data: photo.data, width: photo.info.width, height: photo.info.height, channels: 3 } : noiseImage(150, 97);
    const model = runtime.model("test/nearest-x2", async () => nearest2xModel());
    const result = await model.pin((session) =>
      runTiled(image, {
        format: { layout: "NCHW", channelOrder: "RGB", range: [0, 1] },
        scale: 2,
        geometry: { tileSize: 48, tileOverlap: 8 },
        runTile: async (tile) => (await session.run({ image: tile })).upscaled!,
      }),
    );
    expect(Buffer.from(result.data).equals(Buffer.from(nearestUpscale(image, 2).data))).toBe(true);
  });

  it("a fixed 8x8 network gets exactly 8x8 tiles and reassembles the image", async () => {
    const image = noiseImage(19, 11);
    const model = runtime.model("test/identity-8", async () => fixedIdentityModel(8));
    const result = await runTiled(image, {
      format: RGB255,
      scale: 1,
      geometry: { fixedSize: [8, 8], tileOverlap: 2 },
      runTile: async (tile) => (await model.run({ tile })).same!,
    });
    expect(Buffer.from(result.data).equals(Buffer.from(image.data))).toBe(true);
  });

  describe.skipIf(!(hasMirrorModel("superres-lsdir-compact-x4") && hasTestPhotos()))("LSDIR compact 4x (mirror)", () => {
    it("tiled output matches the whole-image output closely, with no visible seams", async () => {
      const crop = await sharp(testPhoto("chelsea.png")).extract({ left: 100, top: 60, width: 96, height: 80 }).removeAlpha().raw().toBuffer();
      const image: RawImage = { data: crop, width: 96, height: 80, channels: 3 };
      const format: ImageTensorFormat = { layout: "NCHW", channelOrder: "RGB", range: [0, 1] };
      const model = runtime.model("test/lsdir-x4", () => fs.readFile(mirrorPath("superres-lsdir-compact-x4", "4xLSDIRCompactC3_fp32.onnx")));
      const runTile = async (tile: TensorData) => (await model.run({ input: tile })).output!;
      const whole = await runTiled(image, { format, scale: 4, runTile });
      const blended = psnr(await runTiled(image, { format, scale: 4, geometry: { tileSize: 32, tileOverlap: 8 }, runTile }), whole);
      const butted = psnr(await runTiled(image, { format, scale: 4, geometry: { tileSize: 32 }, runTile }), whole);
      // Measured: 46.1 dB blended, 38.3 dB butted (the network sees different context near a border).
      expect(blended).toBeGreaterThan(44);
      expect(blended).toBeGreaterThan(butted + 5);
    });
  });
});
