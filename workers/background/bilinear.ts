/**
 * Bilinear resampling of float planes, one output row at a time. Pixel centres line up as in every
 * common resizer (`source = (target + 0.5) * sourceSize / targetSize - 0.5`, clamped at the edges), so
 * a plane computed at a model's or a working resolution lands on the right full-resolution pixels.
 *
 * Row by row because the fields upsampled to full resolution (a 12 MP image has 12 M pixels per
 * channel) are only needed one row at a time: keeping whole planes would cost 48 MB per channel.
 */
import type { FloatPlanes } from "./box-filter.js";

/** Where each target index samples its source axis. */
export interface Taps {
  /** First source index, per target index. */
  lower: Int32Array;
  /** Second source index (the first one again at the edges). */
  upper: Int32Array;
  /** Weight of `upper`; `lower` gets 1 minus it. */
  weight: Float32Array;
}

/** The two source indices and the blend weight of each of `targetSize` positions on a `sourceSize` axis. */
export function axisTaps(sourceSize: number, targetSize: number): Taps {
  const lower = new Int32Array(targetSize);
  const upper = new Int32Array(targetSize);
  const weight = new Float32Array(targetSize);
  const ratio = sourceSize / targetSize;
  for (let i = 0; i < targetSize; i++) {
    const position = Math.min(Math.max((i + 0.5) * ratio - 0.5, 0), sourceSize - 1);
    const first = Math.floor(position);
    lower[i] = first;
    upper[i] = Math.min(first + 1, sourceSize - 1);
    weight[i] = position - first;
  }
  return { lower, upper, weight };
}

/** Produces the rows of `source` stretched to `width` x `height`, reusing one row buffer. */
export class RowSampler {
  readonly channels: number;
  private readonly columns: Taps;
  private readonly rows: Taps;
  /** Source row blended vertically for the current target row. */
  private readonly blended: Float32Array;
  private readonly out: Float32Array;

  constructor(
    private readonly source: FloatPlanes,
    readonly width: number,
    readonly height: number,
  ) {
    this.channels = source.channels;
    this.columns = axisTaps(source.width, width);
    this.rows = axisTaps(source.height, height);
    this.blended = new Float32Array(source.width * source.channels);
    this.out = new Float32Array(width * source.channels);
  }

  /**
   * One target pixel's samples into `target` (from index 0): for fields needed at a few pixels only
   * (the transition band), where blending whole rows would waste most of the work.
   */
  pixel(x: number, y: number, target: Float32Array): void {
    const { data, width: sourceWidth } = this.source;
    const channels = this.channels;
    const top = this.rows.lower[y]! * sourceWidth;
    const bottom = this.rows.upper[y]! * sourceWidth;
    const left = this.columns.lower[x]!;
    const right = this.columns.upper[x]!;
    const wy = this.rows.weight[y]!;
    const wx = this.columns.weight[x]!;
    const a = (top + left) * channels;
    const b = (top + right) * channels;
    const c = (bottom + left) * channels;
    const d = (bottom + right) * channels;
    for (let k = 0; k < channels; k++) {
      const upper = data[a + k]! + (data[b + k]! - data[a + k]!) * wx;
      const lower = data[c + k]! + (data[d + k]! - data[c + k]!) * wx;
      target[k] = upper + (lower - upper) * wy;
    }
  }

  /** Target row `y`, `channels` interleaved samples per pixel; valid until the next call. */
  row(y: number): Float32Array {
    const { data, width: sourceWidth } = this.source;
    const channels = this.channels;
    const stride = sourceWidth * channels;
    const top = this.rows.lower[y]! * stride;
    const bottom = this.rows.upper[y]! * stride;
    const wy = this.rows.weight[y]!;
    const blended = this.blended;
    for (let i = 0; i < stride; i++) blended[i] = data[top + i]! + (data[bottom + i]! - data[top + i]!) * wy;
    const { lower, upper, weight } = this.columns;
    const out = this.out;
    const width = this.width;
    // Unrolled for the common channel counts: a loop over 3 or 4 channels per pixel costs more than the blend.
    if (channels === 4) {
      for (let x = 0; x < width; x++) {
        const a = lower[x]! * 4;
        const b = upper[x]! * 4;
        const wx = weight[x]!;
        const to = x * 4;
        out[to] = blended[a]! + (blended[b]! - blended[a]!) * wx;
        out[to + 1] = blended[a + 1]! + (blended[b + 1]! - blended[a + 1]!) * wx;
        out[to + 2] = blended[a + 2]! + (blended[b + 2]! - blended[a + 2]!) * wx;
        out[to + 3] = blended[a + 3]! + (blended[b + 3]! - blended[a + 3]!) * wx;
      }
    } else if (channels === 3) {
      for (let x = 0; x < width; x++) {
        const a = lower[x]! * 3;
        const b = upper[x]! * 3;
        const wx = weight[x]!;
        const to = x * 3;
        out[to] = blended[a]! + (blended[b]! - blended[a]!) * wx;
        out[to + 1] = blended[a + 1]! + (blended[b + 1]! - blended[a + 1]!) * wx;
        out[to + 2] = blended[a + 2]! + (blended[b + 2]! - blended[a + 2]!) * wx;
      }
    } else {
      for (let x = 0; x < width; x++) {
        const a = lower[x]! * channels;
        const b = upper[x]! * channels;
        const wx = weight[x]!;
        const to = x * channels;
        for (let c = 0; c < channels; c++) out[to + c] = blended[a + c]! + (blended[b + c]! - blended[a + c]!) * wx;
      }
    }
    return out;
  }
}

/** `source` resampled to `width` x `height` as whole planes (for working-resolution sizes). */
export function resampleBilinear(source: FloatPlanes, width: number, height: number): FloatPlanes {
  const sampler = new RowSampler(source, width, height);
  const rowLength = width * source.channels;
  const data = new Float32Array(rowLength * height);
  for (let y = 0; y < height; y++) data.set(sampler.row(y), y * rowLength);
  return { data, width, height, channels: source.channels };
}
