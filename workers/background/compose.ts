/**
 * The one pass over full-resolution pixels. Per pixel, from the working-resolution fields sampled
 * bilinearly at that pixel:
 *
 * 1. matte: `alpha = a . I + b` (the guided filter's coefficients against the pixel's own colour,
 *    see matte-field.ts), times the source's own alpha when it has one;
 * 2. foreground colour: `I` where the matte is opaque; in the transition band the blur-fusion
 *    estimate (foreground-estimate.ts), which removes the old background's share of the colour;
 * 3. output: the matte alone, the cutout (`F`, alpha), or `F` over the new background ("over"
 *    operator, straight alpha, in the image's own sRGB values as CSS and image editors composite).
 *
 * Fully transparent cutout pixels are written as 0,0,0,0: their colour is never seen, and zeros keep
 * the encoded file small. The pass writes over the source's colour plane, and the alpha is a plane
 * of its own that the encoder joins (image/encode-image.ts): certain subject is left as it is and
 * certain background cleared span by span, so per-pixel work is only where the matte depends on the
 * colour.
 */
import { AtelierError } from "../../core/errors.js";
import type { ColourAndAlpha } from "../image/encode-image.js";
import type { RawImage } from "../image/raw-image.js";
import type { FloatPlanes } from "./box-filter.js";
import { RowSampler } from "./bilinear.js";
import { isOpaque, type BackgroundFill } from "./background-fill.js";
import { fuseForeground, type SideMeans } from "./foreground-estimate.js";
import { CLEAR, MatteField, OPAQUE } from "./matte-field.js";

export interface MatteSources {
  /** The source's colour at full resolution, 3 channels. */
  rgb: RawImage;
  /** The source's own alpha, 1 channel, when it has one. */
  sourceAlpha?: RawImage | undefined;
  /** Guided-filter coefficients `(a_r, a_g, a_b, b)` at the working resolution. */
  coefficients: FloatPlanes;
}


function byte(value: number): number {
  return value <= 0 ? 0 : value >= 255 ? 255 : Math.round(value);
}

function checkSources({ rgb, sourceAlpha }: MatteSources): void {
  if (rgb.channels !== 3) throw new AtelierError("INTERNAL", `Expected a 3-channel image to compose but received ${rgb.channels} channels.`);
  if (sourceAlpha && (sourceAlpha.channels !== 1 || sourceAlpha.width !== rgb.width || sourceAlpha.height !== rgb.height)) {
    throw new AtelierError("INTERNAL", "Expected the source alpha plane to match the image.");
  }
}

/** The matte alone: 1 channel, 0 background to 255 subject. */
export function composeMatte(sources: MatteSources): RawImage {
  checkSources(sources);
  const { rgb, sourceAlpha } = sources;
  const { width, height } = rgb;
  const matte = new MatteField(sources.coefficients, width, height);
  const out = new Uint8Array(width * height);
  const k = 1 / 255;
  const source = rgb.data;
  const alphas = new Float64Array(width);
  for (let y = 0; y < height; y++) {
    matte.row(y);
    for (let span = 0; span < matte.spanCount; span++) {
      const from = matte.spanStart(span);
      const to = matte.spanStart(span + 1);
      const known = matte.spanClass(span);
      // Certain spans: background stays 0; subject is 255 unless the source's own alpha says otherwise.
      if (known === 0) continue;
      if (known === 1 && !sourceAlpha) {
        out.fill(255, y * width + from, y * width + to);
        continue;
      }
      matte.alphas(from, to, source, y * width + from, alphas);
      for (let x = from; x < to; x++) {
        const i = y * width + x;
        let alpha = alphas[x - from]!;
        if (sourceAlpha) alpha *= sourceAlpha.data[i]! * k;
        out[i] = byte(alpha * 255);
      }
    }
  }
  return { data: out, width, height, channels: 1 };
}

/**
 * A composite as two planes: the colour (3 channels) and, when the result has transparency, its
 * alpha (1 channel). The encoder joins them (image/encode-image.ts), so no pass over the pixels
 * interleaves them here.
 */
export type ComposedImage = ColourAndAlpha;

/**
 * The cutout (colour and alpha) or the composite over `fill` (colour alone when the fill is opaque,
 * else colour and alpha), written over the source's own colour plane: most of a photograph is
 * certain subject, which then keeps its bytes untouched, or certain background, cleared with one
 * fill per span. The caller hands `sources.rgb` over and must not read it afterwards.
 */
export function composeImage(sources: MatteSources, sides: SideMeans, fill: BackgroundFill): ComposedImage {
  const composition = composeInBands(sources, sides, fill);
  composition.rows(0, sources.rgb.height);
  return composition.image;
}

/**
 * {@link composeImage} a band of rows at a time: `image` holds the result once `rows` has been called
 * for every row, in order from the top (the matte field and the side means are read row after row).
 * The encoder calls it for each band just before filtering that band, so composing one band overlaps
 * the deflate of the bands before it on libuv's pool (png-encoder.ts), rather than the whole image
 * being composed on this thread while the other core waits.
 */
export function composeInBands(sources: MatteSources, sides: SideMeans, fill: BackgroundFill): { image: ComposedImage; rows(from: number, to: number): void } {
  checkSources(sources);
  const { rgb, sourceAlpha } = sources;
  const { width, height } = rgb;
  if (fill.kind === "image" && (fill.image.width !== width || fill.image.height !== height || fill.image.channels < 3)) {
    throw new AtelierError("INTERNAL", "Expected the background image to be cover-fitted to the source's size with 3 or 4 channels.");
  }
  const opaque = isOpaque(fill);
  // Every alpha sample is written below (span fills or per pixel), so the plane needs no zeroing.
  // Plain typed-array views: Buffer's own fill validates its arguments on each of many calls.
  const alphaPlane = opaque ? undefined : new Uint8Array(Buffer.allocUnsafeSlow(width * height).buffer, 0, width * height);
  const source = new Uint8Array(rgb.data.buffer, rgb.data.byteOffset, rgb.data.length);
  // Writes through clamped views round and clamp to 0..255 without a call per sample.
  const colour = new Uint8ClampedArray(source.buffer, source.byteOffset, source.length);
  const alphaOut = alphaPlane && new Uint8ClampedArray(alphaPlane.buffer, alphaPlane.byteOffset, alphaPlane.length);
  const matte = new MatteField(sources.coefficients, width, height);
  const foregroundMeans = new RowSampler(sides.foreground, width, height);
  const backgroundMeans = new RowSampler(sides.background, width, height);
  const blurred = fill.kind === "blur" ? new RowSampler(fill.background, width, height) : undefined;
  const kind = fill.kind;
  const image = fill.kind === "image" ? fill.image : undefined;
  const k = 1 / 255;
  // The side means are needed only in the transition band, a few percent of the pixels: sampled per pixel.
  const fm = new Float32Array(3);
  const bm = new Float32Array(3);
  // The matte of a span's pixels, computed span by span.
  const alphas = new Float64Array(width);
  let next = 0;
  const rows = (from: number, to: number) => {
    if (from !== next || to < from || to > height) throw new AtelierError("INTERNAL", `Expected rows from ${next} up to ${height} to compose but received ${from} to ${to}.`);
    next = to;
    // A solid colour, also the default of the other kinds until they set their own per pixel (locals
    // of this call: variables the closure shared and wrote would cost a context access per pixel).
    let backR = fill.kind === "color" ? fill.red : 0;
    let backG = fill.kind === "color" ? fill.green : 0;
    let backB = fill.kind === "color" ? fill.blue : 0;
    let backA = fill.kind === "color" ? fill.alpha : 1;
    for (let y = from; y < to; y++) {
      matte.row(y);
      const blurRow = blurred?.row(y);
      const row = y * width;
      for (let span = 0; span < matte.spanCount; span++) {
        const from = matte.spanStart(span);
        const to = matte.spanStart(span + 1);
        const known = matte.spanClass(span);
        // Certain spans, most of a photograph, without per-pixel work: a cutout's background is
        // 0,0,0,0, and an opaque subject (with no alpha of its own) keeps its source colour whatever the fill.
        if (known === 0 && kind === "transparent") {
          source.fill(0, (row + from) * 3, (row + to) * 3);
          alphaPlane!.fill(0, row + from, row + to);
          continue;
        }
        if (known === 1 && !sourceAlpha) {
          alphaPlane?.fill(255, row + from, row + to);
          continue;
        }
        matte.alphas(from, to, source, row + from, alphas);
        for (let x = from; x < to; x++) {
          const i = row + x;
          const s = i * 3;
          const r = source[s]!;
          const g = source[s + 1]!;
          const b = source[s + 2]!;
          const alpha = alphas[x - from]!;
          // The foreground estimate uses the network's matte; the source's own transparency only adds to it.
          const a = sourceAlpha ? alpha * sourceAlpha.data[i]! * k : alpha;
          if (kind === "image") {
            const p = i * image!.channels;
            backR = image!.data[p]!;
            backG = image!.data[p + 1]!;
            backB = image!.data[p + 2]!;
            backA = image!.channels === 4 ? image!.data[p + 3]! * k : 1;
          } else if (kind === "blur") {
            backR = blurRow![x * 3]! * 255;
            backG = blurRow![x * 3 + 1]! * 255;
            backB = blurRow![x * 3 + 2]! * 255;
          }
          if (a <= CLEAR) {
            // Background only (a cutout's is 0,0,0,0).
            if (kind === "transparent") {
              colour[s] = 0;
              colour[s + 1] = 0;
              colour[s + 2] = 0;
              alphaOut![i] = 0;
            } else {
              colour[s] = backR;
              colour[s + 1] = backG;
              colour[s + 2] = backB;
              if (alphaOut) alphaOut[i] = backA * 255;
            }
            continue;
          }
          let fr = r;
          let fg = g;
          let fb = b;
          if (alpha < OPAQUE) {
            foregroundMeans.pixel(x, y, fm);
            backgroundMeans.pixel(x, y, bm);
            fr = 255 * fuseForeground(r * k, alpha, fm[0]!, bm[0]!);
            fg = 255 * fuseForeground(g * k, alpha, fm[1]!, bm[1]!);
            fb = 255 * fuseForeground(b * k, alpha, fm[2]!, bm[2]!);
          }
          if (kind === "transparent") {
            colour[s] = fr;
            colour[s + 1] = fg;
            colour[s + 2] = fb;
            alphaOut![i] = a * 255;
            continue;
          }
          // "over" with straight alpha: coverage of the result, then colour weighted by each layer's share.
          const behind = backA * (1 - a);
          const coverage = a + behind;
          const inverse = 1 / coverage;
          colour[s] = (a * fr + behind * backR) * inverse;
          colour[s + 1] = (a * fg + behind * backG) * inverse;
          colour[s + 2] = (a * fb + behind * backB) * inverse;
          if (alphaOut) alphaOut[i] = coverage * 255;
        }
      }
    }
  };
  return { image: { colour: rgb, alpha: alphaPlane && { data: alphaPlane, width, height, channels: 1 } }, rows };
}
