/**
 * Image-to-image inference on an image of any size, one tile at a time.
 *
 * Tiles follow tile-grid.ts: a regular grid whose neighbours share `tileOverlap` input pixels, the last
 * row and column padded (reflected by default) up to the size the network takes. Overlaps are blended
 * with linear weights that sum to 1, so a seam fades over the whole overlap instead of jumping. Most
 * of a tile lies outside its overlaps, where the weight is exactly 1: those pixels are rounded straight
 * from the output tensor into the result, the same values the blend would give, at a fraction of the cost.
 *
 * Float networks get float tiles (runTiled); networks made to take and give bytes (byte-image-graph.ts)
 * get their tiles as bytes and give back rounded samples (runTiledBytes), which are copied as they are
 * outside the overlaps.
 *
 * Memory stays at the 8-bit output plus two tiles (the one being assembled and the next, already
 * running) and the input of a third, waiting for the session (its output too only if assembling a
 * tile ever took longer than a run): tiles run in row order and every output pixel is written as
 * soon as the last tile covering it has run. Only pixels still waiting for a neighbour are kept as
 * floats: the overlap strip below the current tile row (output width x overlap rows, twice:
 * the one being finished and the one being started) and the strip right of the current tile.
 */
import { AtelierError } from "../../core/errors.js";
import type { ImageTensorFormat, InferenceGeometry } from "../../models/catalog/catalog-types.js";
import { throwIfCancelled } from "../onnx/cancellation.js";
import type { ByteTensor, TensorData } from "../onnx/tensor-data.js";
import { byteTensorImage, imageToTensor, tensorChannels, tensorImage, toSample, type TensorImage } from "./image-tensor.js";
import { assertRawImage, type RawImage } from "./raw-image.js";
import { blendWeights, edgeIndex, planAxis, type AxisTile, type EdgeMode } from "./tile-grid.js";
import { reportProgress } from "../work-progress.js";

/** Where one tile sits, in input pixels. */
export interface TileGeometry {
  /** Tile column and row in the grid, from 0. */
  column: number;
  row: number;
  /** Top-left input pixel of the tile. */
  x: number;
  y: number;
  /** Input pixels of the image inside the tile. */
  width: number;
  height: number;
  /** Size of the tensor handed to the network: `width`/`height` plus edge padding. */
  paddedWidth: number;
  paddedHeight: number;
}

export interface TiledInferenceOptions {
  /** How tiles become the network's input tensor. */
  format: ImageTensorFormat;
  /** How the network's output reads back; defaults to `format`. */
  outputFormat?: ImageTensorFormat;
  /** Output pixels per input pixel along each axis, a positive integer (1 for same-size networks). */
  scale: number;
  /**
   * The catalog's geometry: `fixedSize` (every tile exactly that size), else `tileSize` (in input pixels;
   * absent means the whole image in one tile), `tileOverlap` (input pixels, at most half a tile, default 0),
   * `sizeMultiple` (tile sides padded up to a multiple of it).
   */
  geometry?: InferenceGeometry;
  /** How padding past the image edge is filled; default "reflect". */
  edge?: EdgeMode;
  /**
   * Runs the network on one tile tensor and returns its output tensor, which must be `scale` times the
   * padded tile on each side, in `outputFormat`. The tile tensor is made for this call alone, so
   * runTile may hand its buffer over to the inference thread (RunOptions.handOver).
   */
  runTile: (tile: TensorData, geometry: TileGeometry) => Promise<TensorData>;
  /** Checked before each tile; an abort rejects with CANCELLED. */
  signal?: AbortSignal;
}

function positiveInteger(value: number | undefined, name: string): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
    throw new AtelierError("INTERNAL", `Expected positive integer for ${name} but received ${value}.`);
  }
}

function plan(image: RawImage, options: Pick<TiledInferenceOptions, "scale" | "geometry">): { columns: AxisTile[]; rows: AxisTile[] } {
  const geometry = options.geometry ?? {};
  positiveInteger(options.scale, "scale");
  positiveInteger(geometry.tileSize, "tileSize");
  positiveInteger(geometry.sizeMultiple, "sizeMultiple");
  geometry.fixedSize?.forEach((side) => positiveInteger(side, "fixedSize"));
  const overlap = geometry.tileOverlap ?? 0;
  const multiple = geometry.sizeMultiple ?? 1;
  const [fixedWidth, fixedHeight] = geometry.fixedSize ?? [];
  const fixed = geometry.fixedSize !== undefined;
  return {
    columns: planAxis(image.width, { tile: fixed ? fixedWidth : geometry.tileSize, overlap, multiple, fixed }),
    rows: planAxis(image.height, { tile: fixed ? fixedHeight : geometry.tileSize, overlap, multiple, fixed }),
  };
}

/** Copies one tile out of `image`, filling the padding past the image edge. */
function cutTile(image: RawImage, column: AxisTile, row: AxisTile, edge: EdgeMode): RawImage {
  const { channels } = image;
  const width = column.padded;
  const height = row.padded;
  const data = new Uint8Array(width * height * channels);
  // The part inside the image is copied row by row; only the padding is looked up pixel by pixel.
  const inside = Math.min(width, image.width - column.start);
  for (let ty = 0; ty < height; ty++) {
    const rowStart = edgeIndex(row.start + ty, image.height, edge) * image.width;
    const from = (rowStart + column.start) * channels;
    data.set(image.data.subarray(from, from + inside * channels), ty * width * channels);
    for (let tx = inside; tx < width; tx++) {
      const source = (rowStart + edgeIndex(column.start + tx, image.width, edge)) * channels;
      const to = (ty * width + tx) * channels;
      for (let c = 0; c < channels; c++) data[to + c] = image.data[source + c]!;
    }
  }
  return { data, width, height, channels };
}

/**
 * Runs `options.runTile` over `image` (RGB, or grey for a Y network) tile by tile and assembles the
 * `scale`-times larger result: RGB, or grey for a Y output format.
 */
export async function runTiled(image: RawImage, options: TiledInferenceOptions): Promise<RawImage> {
  const outputFormat = options.outputFormat ?? options.format;
  return assembleTiles(image, options, tensorChannels(outputFormat), async (tile, geometry) =>
    tensorImage(await options.runTile(imageToTensor(tile, options.format), geometry), outputFormat),
  );
}

/**
 * {@link runTiled} for a network that takes and gives 8-bit RGB (byte-image-graph.ts): no pixel is
 * converted here, inside the overlaps rows are copied as they are, and only the overlap bands are
 * blended, from the tiles' rounded samples. Where {@link runTiled} blends the float outputs, then clamps
 * and rounds, this blends samples each tile already clamped and rounded: a blended sample may differ
 * from runTiled's by 1 (the blend moves by less than half a step before its own rounding), a little
 * more where a tile's output went past 0..255 (clamped before the blend instead of after); every other
 * sample is the same. Seams fade as before; tiling itself moves samples more than that (the network
 * sees less context near a tile's border).
 */
export async function runTiledBytes(image: RawImage, options: ByteTileOptions): Promise<RawImage> {
  assertRgb(image);
  return assembleTiles(image, options, 3, async (tile, geometry) => {
    const dims = [1, tile.height, tile.width, 3];
    return byteTensorImage(await options.runTile({ data: tile.data, dims }, geometry));
  });
}

/**
 * The tiling both runners share: `runTile` gets each tile's input pixels (padded) and returns its
 * output, which must be `scale` times the padded tile on each side; the result has `channels` channels.
 */
async function assembleTiles(
  image: RawImage,
  options: Pick<TiledInferenceOptions, "scale" | "geometry" | "edge" | "signal">,
  channels: 1 | 3,
  runTile: (tile: RawImage, geometry: TileGeometry) => Promise<TensorImage>,
): Promise<RawImage> {
  assertRawImage(image, "tiling input");
  const { scale } = options;
  const edge = options.edge ?? "reflect";
  const { columns, rows } = plan(image, options);
  const outWidth = image.width * scale;
  const outHeight = image.height * scale;
  const out = new Uint8Array(outWidth * outHeight * channels);
  const output: RawImage = { data: out, width: outWidth, height: outHeight, channels };
  const columnWeights = columns.map((column) => blendWeights(column, scale));

  // Overlap widths in output pixels; every overlap along an axis has the same width (tile-grid.ts).
  const stripRows = Math.max(0, ...rows.map((row) => row.overlapAfter)) * scale;
  const stripColumns = Math.max(0, ...columns.map((column) => column.overlapAfter)) * scale;
  const tallest = Math.max(...rows.map((row) => row.length)) * scale;
  // Partial sums of pixels some later tile still adds to: the strip shared with the previous tile row
  // (`above`), the one shared with the next (`below`), and the one shared with the next tile in the row.
  let above = new Float32Array(outWidth * stripRows * channels);
  let below = new Float32Array(outWidth * stripRows * channels);
  const right = new Float32Array(tallest * stripColumns * channels);
  // One output row of the widest tile, as read back for blending.
  const samples = new Float32Array(Math.max(...columns.map((column) => column.padded)) * scale * channels);

  // Each tile's network run is asked for two tiles ahead: the inference thread runs tile k + 1 while
  // this thread blends tile k, and tile k + 2 already waits at the session's gate when k + 1's run
  // ends, so the gate, which takes waiting runs by their call's arrival (work-order.ts), hands the
  // session straight back to this call rather than to a later call's tile waiting there too.
  const grid = rows.flatMap((row, r) => columns.map((column, c) => ({ row, column, r, c })));
  const start = (k: number) => {
    throwIfCancelled(options.signal);
    const { row, column, r, c } = grid[k]!;
    const geometry: TileGeometry = {
      column: c,
      row: r,
      x: column.start,
      y: row.start,
      width: column.length,
      height: row.length,
      paddedWidth: column.padded,
      paddedHeight: row.padded,
    };
    return runTile(cutTile(image, column, row, edge), geometry);
  };
  const runs: (Promise<TensorImage> | undefined)[] = [];
  const ask = (k: number) => {
    if (k >= grid.length) return;
    const run = start(k);
    // A run ahead may fail (its call cancelled, it leaves the gate at once) while the loop still awaits
    // an earlier one, or after the loop has stopped: it is observed from the start, and its failure
    // reaches the call when the loop awaits it, or never once the call has failed already.
    run.catch(() => {});
    runs[k] = run;
  };
  ask(0);
  ask(1);
  let rowWeights = blendWeights(rows[0]!, scale);
  for (let k = 0; k < grid.length; k++) {
    const { row, column, r, c } = grid[k]!;
    const tile = await runs[k]!;
    runs[k] = undefined;
    ask(k + 2);
    reportProgress(k + 1, grid.length, "tiles");
    if (c === 0 && r > 0) {
      rowWeights = blendWeights(row, scale);
      [above, below] = [below, above];
      below.fill(0);
    }
    const top = row.overlapBefore * scale;
    const height = row.length * scale;
    const bottomStart = height - row.overlapAfter * scale;
    const y0 = row.start * scale;
    if (tile.width !== column.padded * scale || tile.height !== row.padded * scale) {
      throw new AtelierError(
        "INTERNAL",
        `Expected a ${column.padded * scale}x${row.padded * scale} output tile for a ${column.padded}x${row.padded} input tile at scale ${scale} but received ${tile.width}x${tile.height}.`,
      );
    }
    const weights = columnWeights[c]!;
    const left = column.overlapBefore * scale;
    const width = column.length * scale;
    const rightStart = width - column.overlapAfter * scale;
    const x0 = column.start * scale;

    // Inside the overlaps no other tile adds anything and the weight is exactly 1: straight to the output.
    tile.copyTo({ x: left, y: top, width: rightStart - left, height: bottomStart - top }, output, x0 + left, y0 + top);

    // The overlap bands, a row segment at a time: whole rows above and below the inside, and its
    // left and right edges. Each sample is weighted and either added to a strip a later tile
    // completes or, with the last tile's share added, rounded into the output.
    const blendRow = (j: number, from: number, to: number) => {
      tile.readRow(j, from, to, samples);
      const wy = rowWeights[j]!;
      let s = 0;
      let o = ((y0 + j) * outWidth + x0 + from) * channels;
      if (j >= bottomStart) {
        // Shared with the next tile row: only added up so far.
        for (let i = from, at = ((j - bottomStart) * outWidth + x0 + from) * channels; i < to; i++) {
          const w = wy * weights[i]!;
          for (let ch = 0; ch < channels; ch++, s++, at++) below[at]! += samples[s]! * w;
        }
      } else if (j < top) {
        // Shared with the previous tile row (and, left, with the previous tile): complete unless the
        // next tile in the row still adds to it.
        for (let i = from, at = (j * outWidth + x0 + from) * channels; i < to; i++) {
          const w = wy * weights[i]!;
          if (i >= rightStart) for (let ch = 0; ch < channels; ch++, s++, at++, o++) above[at] = above[at]! + samples[s]! * w;
          else for (let ch = 0; ch < channels; ch++, s++, at++, o++) out[o] = toSample(above[at]! + samples[s]! * w);
        }
      } else if (from < left) {
        // The left edge: completes what the previous tile left in the strip beside it.
        for (let i = from, at = (j * stripColumns + from) * channels; i < to; i++) {
          const w = wy * weights[i]!;
          for (let ch = 0; ch < channels; ch++, s++, at++, o++) out[o] = toSample(right[at]! + samples[s]! * w);
        }
      } else {
        // The right edge: the next tile completes it (a tile is at least two overlaps wide, so the
        // next one reads this strip before the row after is written).
        for (let i = from, at = (j * stripColumns + from - rightStart) * channels; i < to; i++) {
          const w = wy * weights[i]!;
          for (let ch = 0; ch < channels; ch++, s++, at++) right[at] = samples[s]! * w;
        }
      }
    };
    for (let j = 0; j < height; j++) {
      if (j >= top && j < bottomStart) {
        if (left > 0) blendRow(j, 0, left);
        if (rightStart < width) blendRow(j, rightStart, width);
      } else {
        blendRow(j, 0, width);
      }
    }
  }
  return output;
}

function assertRgb(image: RawImage): void {
  assertRawImage(image, "tiling input");
  if (image.channels !== 3) throw new AtelierError("INTERNAL", `Expected an RGB image for a byte graph but received ${image.channels} channels.`);
}

/** Whether `image` fits in one tile of `options.geometry` (then no overlap needs blending). */
export function fitsOneTile(image: RawImage, options: Pick<TiledInferenceOptions, "scale" | "geometry">): boolean {
  const { columns, rows } = plan(image, options);
  return columns.length === 1 && rows.length === 1;
}

export interface ByteTileOptions extends Pick<TiledInferenceOptions, "scale" | "geometry" | "edge" | "signal"> {
  /**
   * Runs a network that takes and gives 8-bit interleaved RGB (byte-image-graph.ts) on the tile, a
   * `[1, H, W, 3]` uint8 tensor made for this call alone, and returns its `[1, scale H, scale W, 3]` output.
   */
  runTile: (tile: ByteTensor, geometry: TileGeometry) => Promise<ByteTensor>;
}

/**
 * Runs `options.runTile` on `image` (RGB) as one tile ({@link fitsOneTile} must hold): the tile goes in
 * and comes out as bytes, padded as {@link runTiled} pads it, and the padding is cropped off.
 */
export async function runOneByteTile(image: RawImage, options: ByteTileOptions): Promise<RawImage> {
  assertRgb(image);
  const { columns, rows } = plan(image, options);
  const [column, row] = [columns[0]!, rows[0]!];
  if (columns.length !== 1 || rows.length !== 1) throw new AtelierError("INTERNAL", `Expected one tile but the image takes ${columns.length}x${rows.length}.`);
  throwIfCancelled(options.signal);
  const tile = cutTile(image, column, row, options.edge ?? "reflect");
  const geometry: TileGeometry = { column: 0, row: 0, x: 0, y: 0, width: column.length, height: row.length, paddedWidth: column.padded, paddedHeight: row.padded };
  const result = await options.runTile({ data: tile.data, dims: [1, tile.height, tile.width, 3] }, geometry);
  reportProgress(1, 1, "tiles");
  const { scale } = options;
  const [batch, outHeight, outWidth, channels] = result.dims;
  if (result.dims.length !== 4 || batch !== 1 || channels !== 3 || outWidth !== column.padded * scale || outHeight !== row.padded * scale) {
    throw new AtelierError(
      "INTERNAL",
      `Expected a [1, ${row.padded * scale}, ${column.padded * scale}, 3] output tile for a ${column.padded}x${row.padded} input tile at scale ${scale} but received [${result.dims.join(", ")}].`,
    );
  }
  const width = image.width * scale;
  const height = image.height * scale;
  if (outWidth === width && outHeight === height) return { data: result.data, width, height, channels: 3 };
  // The image is the tile's top-left corner; the padding right and below it goes.
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) data.set(result.data.subarray(y * outWidth * 3, (y * outWidth + width) * 3), y * width * 3);
  return { data, width, height, channels: 3 };
}
