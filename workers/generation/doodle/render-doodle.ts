/**
 * Turns the doodle model's 28x28 stroke probabilities into a pen drawing at any size, in named steps:
 *
 * 1. emphasise: lift the stroke ridges above the model's grey haze (stroke-emphasis.ts);
 * 2. resample: a smooth cubic upsampling to a fixed tracing square (resample-map.ts), so contours
 *    are curves, not 28 blocks;
 * 3. trace: threshold and thin to one-pixel centre lines, drop specks (stroke-skeleton.ts);
 * 4. distance: distance of every tracing pixel to the nearest line (distance-field.ts);
 * 5. ink: at the output size, a pixel's ink is a smoothstep of its distance to the lines around the
 *    pen radius, so every stroke has one width and an anti-aliased edge about 1.5 pixels wide, at
 *    any scale (as signed-distance font rendering does);
 * 6. paper: the square drawing is centred on white paper of the requested shape, with a margin.
 *
 * Tracing at a fixed size means a seed draws the same lines at 64 or 1024 pixels; only the output
 * sampling changes. Everything is plain float arithmetic: the same input gives the same pixels.
 *
 * The steps' pixel loops are small functions of one row (or line) each, called many times per
 * drawing, and no step makes a closure per call. A drawing is made once per request: a loop over the
 * whole image inside a function called once per drawing would run as V8's on-stack-replacement code,
 * which is compiled before the code after the loop has run (which then deoptimises it) and which V8
 * holds only weakly, so a full garbage collection drops it and the next drawing starts cold again,
 * several times slower. A function called for every row gets optimised as a whole within the first
 * drawings, and that code stays.
 */
import type { RawImage } from "../../image/raw-image.js";
import { distanceField } from "./distance-field.js";
import { keepShape } from "./kept-shapes.js";
import { resampleMap, type FloatMap } from "./resample-map.js";
import { emphasiseStrokes, gaussianBlur, type StrokeEmphasis } from "./stroke-emphasis.js";
import { dropSpecks, thinToLines, thresholdMap } from "./stroke-skeleton.js";

export interface DoodleStyle {
  /** Blank paper on each side, as a fraction of the shorter side, 0 to 0.45. */
  margin: number;
  emphasis: StrokeEmphasis;
  /** Side of the square the lines are traced on, in pixels. */
  traceSize: number;
  /** Emphasised stroke value above which a tracing pixel belongs to a stroke. */
  threshold: number;
  /**
   * Gaussian radius, in tracing pixels, that rounds the one-pixel stair steps of the traced lines
   * off the distance field, so large outputs show curves rather than jagged outlines.
   */
  lineSmoothing: number;
  /** Lines with fewer pixels than this fraction of `traceSize` are specks and dropped. */
  minLineFraction: number;
  /** Pen width as a fraction of the drawing's side. */
  penWidth: number;
  /** Narrowest pen, in output pixels, so small drawings stay visible. */
  minPenPixels: number;
  /** Width of the anti-aliased edge, in output pixels. */
  edgePixels: number;
  /** Grey level of the ink, 0..255. */
  ink: number;
  /** Grey level of the paper, 0..255. */
  paper: number;
}

export const DOODLE_STYLE: DoodleStyle = {
  margin: 0.06,
  emphasis: { sigma: 3, amount: 3 },
  traceSize: 256,
  threshold: 0.6,
  lineSmoothing: 2,
  minLineFraction: 0.04,
  penWidth: 0.025,
  minPenPixels: 1.2,
  edgePixels: 1.5,
  ink: 24,
  paper: 255,
};

function smoothstep(edge0: number, edge1: number, x: number): number {
  const t = x <= edge0 ? 0 : x >= edge1 ? 1 : (x - edge0) / (edge1 - edge0);
  return t * t * (3 - 2 * t);
}

/** Steps 1 to 4: distance (in tracing pixels) from each tracing pixel to the nearest stroke line. */
export function traceStrokes(map: FloatMap, style: DoodleStyle = DOODLE_STYLE): FloatMap {
  const emphasised = emphasiseStrokes(map, style.emphasis);
  const smooth = resampleMap(emphasised, style.traceSize, style.traceSize, "b-spline");
  const lines = dropSpecks(thinToLines(thresholdMap(smooth, style.threshold)), Math.ceil(style.traceSize * style.minLineFraction));
  return gaussianBlur(distanceField(lines), style.lineSmoothing);
}

/** Bilinear sample of `field` at (x, y) in its pixel coordinates, edges repeated. */
function sample(field: FloatMap, x: number, y: number): number {
  const { data, width, height } = field;
  const cx = x < 0 ? 0 : x > width - 1 ? width - 1 : x;
  const cy = y < 0 ? 0 : y > height - 1 ? height - 1 : y;
  const x0 = Math.floor(cx);
  const y0 = Math.floor(cy);
  const x1 = x0 + 1 < width ? x0 + 1 : x0;
  const y1 = y0 + 1 < height ? y0 + 1 : y0;
  const fx = cx - x0;
  const fy = cy - y0;
  const top = data[y0 * width + x0]! * (1 - fx) + data[y0 * width + x1]! * fx;
  const bottom = data[y1 * width + x0]! * (1 - fx) + data[y1 * width + x1]! * fx;
  return top * (1 - fy) + bottom * fy;
}

/** The pen's geometry at one output size. */
class Pen {
  constructor(
    /** Tracing pixels per output pixel. */
    readonly toTrace: number,
    /** Half the pen width, in output pixels. */
    readonly radius: number,
    /** Half the anti-aliased edge, in output pixels. */
    readonly half: number,
  ) {}
}
keepShape(new Pen(0.5, 0.5, 0.5));

/** Row `y` of the `side` x `side` coverage from the traced distances. */
function inkRow(distances: FloatMap, side: number, pen: Pen, y: number, coverage: Float32Array): void {
  const { toTrace, radius, half } = pen;
  for (let x = 0; x < side; x++) {
    const distance = sample(distances, (x + 0.5) * toTrace - 0.5, (y + 0.5) * toTrace - 0.5) / toTrace;
    coverage[y * side + x] = 1 - smoothstep(radius - half, radius + half, distance);
  }
}

/** Step 5: ink coverage 0..1 of a `side` x `side` drawing from the traced distances. */
export function inkDrawing(distances: FloatMap, side: number, style: DoodleStyle = DOODLE_STYLE): Float32Array {
  const pen = new Pen(distances.width / side, Math.max(style.minPenPixels, style.penWidth * side) / 2, style.edgePixels / 2);
  const coverage = new Float32Array(side * side);
  for (let y = 0; y < side; y++) inkRow(distances, side, pen, y, coverage);
  return coverage;
}

/** Row `y` of `drawing` (coverage of a `side` x `side` square) inked onto row `top + y` of `paper` (`width` wide) from `left`. */
function inkOnPaperRow(drawing: Float32Array, side: number, y: number, paper: Uint8Array, width: number, left: number, top: number, style: DoodleStyle): void {
  const span = style.paper - style.ink;
  const row = (top + y) * width + left;
  for (let x = 0; x < side; x++) paper[row + x] = Math.round(style.paper - span * drawing[y * side + x]!);
}

/**
 * A grey `width` x `height` drawing of `map` (stroke probabilities 0..1, bright strokes): dark pen
 * lines on paper, the square drawing as large as the margin allows and centred.
 */
export function renderDoodle(map: FloatMap, width: number, height: number, style: DoodleStyle = DOODLE_STYLE): RawImage {
  const side = Math.max(1, Math.round(Math.min(width, height) * (1 - 2 * style.margin)));
  const drawing = inkDrawing(traceStrokes(map, style), side, style);
  const data = new Uint8Array(width * height).fill(style.paper);
  const left = Math.floor((width - side) / 2);
  const top = Math.floor((height - side) / 2);
  for (let y = 0; y < side; y++) inkOnPaperRow(drawing, side, y, data, width, left, top, style);
  return { data, width, height, channels: 1 };
}
