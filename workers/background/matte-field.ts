/**
 * The matte at full resolution: `alpha = a . rgb + b` with the working-resolution coefficients
 * interpolated bilinearly at each pixel.
 *
 * Most pixels of a photograph lie where every coefficient around them says "0" (or "1") whatever
 * the pixel's colour: `b + sum(max(a_c, 0))` is at most the clear level (or `b + sum(min(a_c, 0))` at
 * least the opaque level). Bilinear interpolation is a convex combination, and those two bounds are
 * convex and concave in the coefficients, so when all four neighbouring working pixels are certain
 * the interpolated matte is certain too and needs no interpolation. Each working pixel is classified
 * once; full-resolution work then concentrates on the edges, which matters at 12 MP.
 */
import { axisTaps, type Taps } from "./bilinear.js";
import type { FloatPlanes } from "./box-filter.js";

/** Below this the matte rounds to 0 in 8 bits; above `OPAQUE` it rounds to 255. */
export const CLEAR = 0.5 / 255;
export const OPAQUE = 1 - 0.5 / 255;

const ZERO = 0;
const ONE = 1;
/** The class of a run whose matte depends on each pixel's colour (see `runClass`). */
export const MIXED = 2;

/**
 * Per working pixel of `field`: ZERO or ONE when the matte there is that whatever the colour, else
 * MIXED (see the header).
 */
export function classifyField(field: FloatPlanes): Uint8Array {
  const pixels = field.width * field.height;
  const classes = new Uint8Array(pixels);
  const f = field.data;
  for (let i = 0; i < pixels; i++) {
    const o = i * 4;
    const ar = f[o]!;
    const ag = f[o + 1]!;
    const ab = f[o + 2]!;
    const b = f[o + 3]!;
    const highest = b + (ar > 0 ? ar : 0) + (ag > 0 ? ag : 0) + (ab > 0 ? ab : 0);
    const lowest = b + (ar < 0 ? ar : 0) + (ag < 0 ? ag : 0) + (ab < 0 ? ab : 0);
    classes[i] = highest <= CLEAR ? ZERO : lowest >= OPAQUE ? ONE : MIXED;
  }
  return classes;
}

/**
 * The working pixels whose foreground and background means compose.ts can read: a full-resolution
 * pixel blends the 2 x 2 working pixels around it, and needs the means only when the matte there
 * depends on its colour, that is when those four are not all of one certain class. So every pixel
 * of such a block is marked: a MIXED pixel, or one with a neighbour of another class.
 */
export function sideMeansNeeded(classes: Uint8Array, width: number, height: number): Uint8Array {
  const marks = new Uint8Array(width * height);
  // Blocks of rows y, y + 1 and columns x, x + 1 (one row or column when the image has only one).
  for (let y = 0; y < Math.max(1, height - 1); y++) {
    const top = y * width;
    const bottom = Math.min(y + 1, height - 1) * width;
    for (let x = 0; x < Math.max(1, width - 1); x++) {
      const right = Math.min(x + 1, width - 1);
      const known = classes[top + x]!;
      if (known !== MIXED && classes[top + right] === known && classes[bottom + x] === known && classes[bottom + right] === known) continue;
      marks[top + x] = marks[top + right] = marks[bottom + x] = marks[bottom + right] = 1;
    }
  }
  return marks;
}

export class MatteField {
  private readonly columns: Taps;
  private readonly rows: Taps;
  /** Per working pixel: ZERO, ONE or MIXED. */
  private readonly classes: Uint8Array;
  /** For the current row, per working column: the class shared by both source rows, else MIXED. */
  private readonly rowClasses: Uint8Array;
  /**
   * Runs of target columns that sample the same two working columns: run `k` is the columns
   * `[runs[k], runs[k + 1])`. A few per working column, so a row is decided run by run.
   */
  private readonly runs: Int32Array;
  /**
   * The current row as spans: neighbouring runs of one class merged, span `k` being the columns
   * `[spanStarts[k], spanStarts[k + 1])` of class `spanClasses[k]`. A row of a photograph has a
   * handful, so the certain parts are filled span by span rather than run by run.
   */
  private readonly spanStarts: Int32Array;
  private readonly spanClasses: Uint8Array;
  private spans = 0;
  private top = -1;
  private bottom = -1;
  private wy = 0;

  /** @param field `(a_r, a_g, a_b, b)` per working pixel, rgb on 0..1. */
  constructor(
    private readonly field: FloatPlanes,
    width: number,
    height: number,
  ) {
    this.columns = axisTaps(field.width, width);
    this.rows = axisTaps(field.height, height);
    this.classes = classifyField(field);
    this.rowClasses = new Uint8Array(field.width);
    const starts = [0];
    for (let x = 1; x < width; x++) {
      if (this.columns.lower[x] !== this.columns.lower[x - 1] || this.columns.upper[x] !== this.columns.upper[x - 1]) starts.push(x);
    }
    starts.push(width);
    this.runs = Int32Array.from(starts);
    this.spanStarts = new Int32Array(starts.length);
    this.spanClasses = new Uint8Array(starts.length);
  }

  /** Spans of the current row; span `k` covers columns `spanStart(k)` to `spanStart(k + 1)`, exclusive. */
  get spanCount(): number {
    return this.spans;
  }

  spanStart(k: number): number {
    return this.spanStarts[k]!;
  }

  /**
   * On the current row, the matte of every pixel of span `k` when it is certain whatever the pixel's
   * colour: 0 or 1 (what `alphas` gives each of them), else {@link MIXED}.
   */
  spanClass(k: number): number {
    return this.spanClasses[k]!;
  }

  /** Moves to target row `y`; call before `alphas` and the span accessors for the pixels of that row. */
  row(y: number): void {
    const width = this.field.width;
    const top = this.rows.lower[y]! * width;
    const bottom = this.rows.upper[y]! * width;
    this.wy = this.rows.weight[y]!;
    // Neighbouring target rows mostly sample the same two working rows: their spans are the same.
    if (top === this.top && bottom === this.bottom && this.spans > 0) return;
    this.top = top;
    this.bottom = bottom;
    const classes = this.classes;
    const rowClasses = this.rowClasses;
    for (let x = 0; x < width; x++) {
      const upper = classes[this.top + x]!;
      rowClasses[x] = upper === classes[this.bottom + x] ? upper : MIXED;
    }
    // A run is certain when both working columns it samples are, with the same class.
    const { lower, upper } = this.columns;
    const runs = this.runs;
    const last = runs.length - 1;
    let spans = 0;
    let current = -1;
    for (let k = 0; k < last; k++) {
      const x = runs[k]!;
      const known = rowClasses[lower[x]!]!;
      const kind = known !== MIXED && known === rowClasses[upper[x]!] ? known : MIXED;
      if (kind === current) continue;
      this.spanStarts[spans] = x;
      this.spanClasses[spans] = kind;
      spans++;
      current = kind;
    }
    this.spanStarts[spans] = runs[last]!;
    this.spans = spans;
  }

  /**
   * The matte, 0..1, of columns `[from, to)` of the current row into `out` (from index 0), each
   * pixel's colour read from `rgb` (3 channels, 0..255) starting at pixel index `first` for column
   * `from`. A span at a time: a call per pixel would box each result.
   */
  alphas(from: number, to: number, rgb: Uint8Array, first: number, out: Float64Array): void {
    const f = this.field.data;
    const { lower, upper, weight } = this.columns;
    const rowClasses = this.rowClasses;
    const wy = this.wy;
    const top = this.top;
    const bottom = this.bottom;
    for (let x = from, s = first * 3, o = 0; x < to; x++, s += 3, o++) {
      const left = lower[x]!;
      const right = upper[x]!;
      const known = rowClasses[left]!;
      if (known !== MIXED && known === rowClasses[right]) {
        out[o] = known;
        continue;
      }
      const wx = weight[x]!;
      const w00 = (1 - wx) * (1 - wy);
      const w01 = wx * (1 - wy);
      const w10 = (1 - wx) * wy;
      const w11 = wx * wy;
      const p = (top + left) * 4;
      const q = (top + right) * 4;
      const u = (bottom + left) * 4;
      const v = (bottom + right) * 4;
      const ar = f[p]! * w00 + f[q]! * w01 + f[u]! * w10 + f[v]! * w11;
      const ag = f[p + 1]! * w00 + f[q + 1]! * w01 + f[u + 1]! * w10 + f[v + 1]! * w11;
      const ab = f[p + 2]! * w00 + f[q + 2]! * w01 + f[u + 2]! * w10 + f[v + 2]! * w11;
      const bias = f[p + 3]! * w00 + f[q + 3]! * w01 + f[u + 3]! * w10 + f[v + 3]! * w11;
      const value = (ar * rgb[s]! + ag * rgb[s + 1]! + ab * rgb[s + 2]!) / 255 + bias;
      out[o] = value <= 0 ? 0 : value >= 1 ? 1 : value;
    }
  }
}
