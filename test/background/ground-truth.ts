/**
 * Test images whose true matte is known exactly, because we made them: a subject cut out of a real
 * photograph with a known alpha, composited onto another real photograph,
 *
 *   image = alpha * subject + (1 - alpha) * background   (per channel, rounded to 8 bits)
 *
 * The alpha is a polygon traced by hand around the subject (person: hair, neck ring and shoulders of
 * astronaut.png, cropped to head and shoulders; object: cup, spoon and saucer of coffee.png), drawn
 * anti-aliased and feathered with a Gaussian of 1 px, so edges are soft as in a real photograph.
 * Wherever the tracing strays from the photographed edge, the composite simply shows that stray
 * sliver, so the truth stays exact: it is the alpha the image was made with, not an annotation of it.
 * We also know the true foreground colour under every edge pixel (the subject photograph) and the
 * old background's, which is what the decontamination measures use.
 */
import sharp, { type Sharp } from "sharp";
import { testPhoto } from "../support/test-assets.js";

type Photo = Parameters<typeof testPhoto>[0];

export interface SubjectSpec {
  name: string;
  photo: Photo;
  /** Region of the photograph used: the composite has this size. */
  crop: { left: number; top: number; width: number; height: number };
  /** Outline in crop coordinates, clockwise. */
  outline: [number, number][];
  /** What finds it: a people model or only a general one. */
  kind: "person" | "object";
}

/** Head and shoulders of astronaut.png (the helmet she holds lies below the crop). */
export const PERSON: SubjectSpec = {
  name: "person",
  photo: "astronaut.png",
  crop: { left: 0, top: 0, width: 512, height: 340 },
  kind: "person",
  // prettier-ignore
  outline: [[27,340],[30,320],[38,298],[47,280],[60,258],[75,238],[92,220],[100,212],[107,208],[112,203],[116,196],[119,190],[122,182],[127,172],[135,162],[145,155],[157,151],[170,149],[179,147],[178,140],[171,137],[163,128],[158,118],[155,110],[153,90],[155,67],[158,53],[167,40],[183,28],[210,17],[240,14],[265,20],[285,33],[295,50],[300,70],[302,93],[297,113],[287,127],[273,135],[267,138],[265,150],[261,165],[256,174],[260,175],[270,177],[280,182],[289,190],[295,200],[301,212],[304,225],[305,235],[304,240],[317,251],[335,266],[347,282],[356,300],[361,320],[363,340]],
};

/** Cup, spoon and saucer of coffee.png. */
export const CUP: SubjectSpec = {
  name: "cup",
  photo: "coffee.png",
  crop: { left: 0, top: 0, width: 600, height: 400 },
  kind: "object",
  // prettier-ignore
  outline: [[76,232],[76,215],[78,198],[81,182],[86,168],[92,155],[99,142],[107,130],[117,118],[127,108],[138,99],[150,90],[160,82],[170,76],[177,72],[181,64],[188,55],[200,45],[222,32],[250,22],[280,17],[310,18],[340,24],[365,35],[385,50],[398,66],[404,74],[410,67],[418,66],[424,72],[424,84],[418,106],[440,128],[460,160],[474,200],[479,230],[475,265],[462,300],[440,335],[410,360],[370,380],[320,390],[270,392],[223,391],[182,380],[140,354],[104,313],[83,266],[78,248]],
};

export interface Composite {
  name: string;
  width: number;
  height: number;
  /** The composite as a PNG, what the service is given. */
  png: Buffer;
  /** The composite's pixels, RGB. */
  image: Uint8Array;
  /** True alpha on 0..1, one value per pixel. */
  alpha: Float32Array;
  /** The subject's true colours, RGB. */
  foreground: Uint8Array;
  /** The old background's colours, RGB. */
  background: Uint8Array;
}

/** What the subject is put on: a test photograph (cover-fitted) or a flat colour (a "screen"). */
export type Backdrop = Photo | { name: string; color: { r: number; g: number; b: number } };

export const GREEN_SCREEN: Backdrop = { name: "green screen", color: { r: 0, g: 255, b: 0 } };
export const BLUE_SCREEN: Backdrop = { name: "blue screen", color: { r: 0, g: 0, b: 255 } };

/** Gaussian sigma of the feathered edge, in pixels of the unscaled photograph. */
export const FEATHER_SIGMA = 1;

async function rgbOf(pipeline: Sharp): Promise<Uint8Array> {
  return new Uint8Array(await pipeline.removeAlpha().toColourspace("srgb").raw().toBuffer());
}

/**
 * `subject` composited onto `backdrop`. With `scale` above 1 both
 * photographs are enlarged (Lanczos) and the outline and feather scaled with them: a larger image
 * whose truth is just as exact, for the regime where the network's matte must be enlarged.
 */
export async function buildComposite(subject: SubjectSpec, backdrop: Backdrop, scale = 1): Promise<Composite> {
  const width = Math.round(subject.crop.width * scale);
  const height = Math.round(subject.crop.height * scale);
  const foreground = await rgbOf(sharp(testPhoto(subject.photo)).extract(subject.crop).resize(width, height, { fit: "fill" }));
  const background =
    typeof backdrop === "string"
      ? await rgbOf(sharp(testPhoto(backdrop)).resize(width, height, { fit: "cover" }))
      : await rgbOf(sharp({ create: { width, height, channels: 3, background: backdrop.color } }));
  const points = subject.outline.map(([x, y]) => `${x * scale},${y * scale}`).join(" ");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="black"/><polygon points="${points}" fill="white"/></svg>`;
  const mask = new Uint8Array(await sharp(Buffer.from(svg)).blur(FEATHER_SIGMA * scale).toColourspace("b-w").extractChannel(0).raw().toBuffer());
  const pixels = width * height;
  if (mask.length !== pixels) throw new Error(`mask has ${mask.length} samples for ${pixels} pixels`);
  const alpha = new Float32Array(pixels);
  const image = new Uint8Array(pixels * 3);
  for (let p = 0; p < pixels; p++) {
    const a = mask[p]! / 255;
    alpha[p] = a;
    for (let c = 0; c < 3; c++) image[p * 3 + c] = Math.round(a * foreground[p * 3 + c]! + (1 - a) * background[p * 3 + c]!);
  }
  const png = await sharp(image, { raw: { width, height, channels: 3 } }).png().toBuffer();
  const where = typeof backdrop === "string" ? backdrop.replace(/\.\w+$/, "") : backdrop.name;
  const name = `${subject.name} on ${where}${scale === 1 ? "" : ` x${scale}`}`;
  return { name, width, height, png, image, alpha, foreground, background };
}

/** Matte quality: intersection over union at 0.5, and mean absolute error on 0..1. */
export function matteScores(predicted: Float32Array, truth: Float32Array): { iou: number; mae: number } {
  let intersection = 0;
  let union = 0;
  let error = 0;
  for (let i = 0; i < truth.length; i++) {
    const p = predicted[i]! >= 0.5;
    const t = truth[i]! >= 0.5;
    if (p && t) intersection++;
    if (p || t) union++;
    error += Math.abs(predicted[i]! - truth[i]!);
  }
  return { iou: union === 0 ? 1 : intersection / union, mae: error / truth.length };
}

/** An RGB or RGBA image's pixels with its alpha on 0..1 (all 1 without alpha). */
export interface Cutout {
  data: Uint8Array;
  channels: number;
}

function alphaAt(cutout: Cutout, p: number): number {
  return cutout.channels === 4 ? cutout.data[p * 4 + 3]! / 255 : 1;
}

/**
 * How much of the old background is left in two cutouts' colours. The same subject with the same
 * alpha on two backdrops must give the same foreground colours; the part of their difference that
 * follows the backdrops' difference is old background:
 *
 *   k = sum (F1 - F2) . (B1 - B2) / sum |B1 - B2|^2   over the true transition band
 *
 * (alpha 0.05 to 0.95, where both cutouts are visible). The composites' own colours give
 * k = mean(1 - alpha), about 0.5; a perfect foreground estimate gives 0.
 */
export function backgroundBleed(first: Cutout, firstComposite: Composite, second: Cutout, secondComposite: Composite): { bleed: number; pixels: number } {
  let dot = 0;
  let norm = 0;
  let pixels = 0;
  const truth = firstComposite.alpha;
  for (let p = 0; p < truth.length; p++) {
    const a = truth[p]!;
    if (a <= 0.05 || a >= 0.95 || alphaAt(first, p) < 0.05 || alphaAt(second, p) < 0.05) continue;
    for (let c = 0; c < 3; c++) {
      const towards = firstComposite.background[p * 3 + c]! - secondComposite.background[p * 3 + c]!;
      dot += (first.data[p * first.channels + c]! - second.data[p * second.channels + c]!) * towards;
      norm += towards * towards;
    }
    pixels++;
  }
  return { bleed: norm === 0 ? 0 : dot / norm, pixels };
}
