/**
 * Background removal as an ordered list of named steps, each in its own file:
 *
 *   decode (network size first, then full size and working size) → segment (network; the guide's
 *   own statistics beside it) → refine (guided filter) → foreground (blur-fusion means) → fill (new
 *   background) → compose (full resolution) → encode
 *
 * Compose and encode run together, band by band (a matte alone: one after the other): the encoder
 * asks for each band of rows just before it filters it, so composing a band on this thread overlaps
 * the deflate of the bands before on libuv's pool, and both cores work after the network.
 *
 * The working size has at most as many pixels as the network's matte, and at most 0.25 MP
 * (working-image.ts).
 *
 * Each step waits only for the decode it needs, so the full-resolution decode overlaps the network
 * and the refinement (see decode-source.ts), and while the network runs on the inference thread this
 * thread computes the guided filter's statistics of the working copy, which need no matte. Each step's
 * wall time is reported, so the service can log it and bench/background.ts can show where the time
 * goes beside the bare network run: "segment" includes the small decodes and those statistics,
 * "decode" is what was left to wait for of the full-resolution one.
 */
import type { OutputFormat, Image } from "../../gen/atelier/image/v1/image.js";
import { throwIfCancelled } from "../onnx/cancellation.js";
import { encodeImage, type ColourAndAlpha } from "../image/encode-image.js";
import type { ImageLimits } from "../../core/image-limits.js";
import type { OpenedImage } from "../../core/open-image.js";
import type { RawImage } from "../image/raw-image.js";
import type { ModelLoader } from "../model-loader.js";
import type { ModelRuntime } from "../onnx/onnx-runtime.js";
import { blurredBackground, coverFit, defaultBlurSigma, type BackgroundFill } from "./background-fill.js";
import type { ChosenModel } from "../../models/requests/background-model-choice.js";
import { composeInBands, composeMatte } from "./compose.js";
import { blurFusionMeans, type BlurFusionOptions } from "./foreground-estimate.js";
import { decodeSource, observed } from "./decode-source.js";
import { classifyField, sideMeansNeeded } from "./matte-field.js";
import { networkSize, predictMatte } from "./predict-matte.js";
import { guideStatistics } from "./guided-filter.js";
import { refineMatte, refineRadius, type RefineOptions } from "./refine-matte.js";
import { PlanePool, type Allocate } from "./scratch-plane.js";
import { workingBudget, workingSize } from "./working-image.js";

/** What the client asked to put behind the subject, before it is prepared. */
export type FillRequest =
  | { kind: "transparent" }
  /** Channels 0..255, alpha 0..1. */
  | { kind: "color"; red: number; green: number; blue: number; alpha: number }
  /** Encoded image bytes, cover-fitted to the source. */
  | { kind: "image"; bytes: Uint8Array }
  /** Gaussian sigma in source pixels; 0 picks one from the image size. */
  | { kind: "blur"; sigma: number };

export interface RemovalRequest {
  source: OpenedImage;
  model: ChosenModel;
  fill: FillRequest;
  onlyMask: boolean;
  outputFormat: OutputFormat;
}

export interface RemovalDependencies {
  runtime: ModelRuntime;
  models: ModelLoader;
  limits: ImageLimits;
}

/** Knobs for experiments (bench/background.ts); production uses the defaults. */
export interface RemovalTuning {
  refine?: RefineOptions;
  /** Pixels of the working copy; default {@link workingBudget} of the network's size. */
  workingPixels?: number;
  /** Skip foreground estimation (keep the source colours in the band; exact below the working size), for comparisons. */
  keepSourceColours?: boolean;
}

export interface RemovalResult {
  image: Image;
  /** Milliseconds per step, in order. */
  timings: Record<string, number>;
}

/**
 * Blur-fusion windows for a working copy of `width` x `height`: the paper's boxes (90 and 6 pixels,
 * radii 45 and 3, on images of about a megapixel) scaled with the image's side, so a window covers
 * the same part of the picture at any size (radii 23 and 2 on a 512 x 512 working copy).
 */
export function blurFusionRadii(width: number, height: number): BlurFusionOptions {
  const side = Math.sqrt(width * height);
  return { wideRadius: Math.max(4, Math.round(0.045 * side)), narrowRadius: Math.max(1, Math.round(0.003 * side)) };
}

/**
 * How PNG results are deflated (png-encoder.ts): run-length matching, for the large flat areas all of
 * them have (a cutout's transparent zeros, a fill, a matte's inside). Measured on ISNet and selfie
 * results of the background bench's person on rocket.jpg and the cup on chelsea.png at 12 MP, deflate
 * CPU per MP after the Average filter and the size against the raw pixels: cutouts Huffman-only 20-22
 * ms 18 %, run-length 14-16 ms 11 %, zlib level 1 16-18 ms 12-14 %; white fills 13-14 ms 19.5 %, 9-11
 * ms 11-13 %, 10-13 ms 13-15 %; mattes 4-5 ms 14 %, 0.6-1.2 ms 1.5-2 %, 0.7-1.2 ms 2-3 %. libvips
 * (level 2, unfiltered, as before): cutouts 19 ms of CPU per MP for the whole encode at 22 % of raw.
 * `npx tsx bench/png-encode.ts --sets background` prints these per output kind.
 */
export const RESULT_DEFLATE = "rle" as const;

class StepClock {
  readonly timings: Record<string, number> = {};
  private last = performance.now();

  constructor(private readonly signal?: AbortSignal) {}

  /** Records the time since the previous step; stops the pipeline if the caller went away. */
  done(step: string): void {
    const now = performance.now();
    this.timings[step] = Math.round((now - this.last) * 10) / 10;
    this.last = now;
    throwIfCancelled(this.signal);
  }
}

/** The working-resolution planes of the removals under way (see PlanePool). */
const planes = new PlanePool();

export async function runRemoval(request: RemovalRequest, deps: RemovalDependencies, signal?: AbortSignal, tuning: RemovalTuning = {}): Promise<RemovalResult> {
  const lease = planes.lease();
  try {
    return await removeWith(lease.allocate, request, deps, signal, tuning);
  } finally {
    // The image is encoded: no step reads its planes any more.
    lease.release();
  }
}

async function removeWith(allocate: Allocate, request: RemovalRequest, deps: RemovalDependencies, signal: AbortSignal | undefined, tuning: RemovalTuning): Promise<RemovalResult> {
  const clock = new StepClock(signal);
  const { width, height } = request.source.info;
  const [networkWidth, networkHeight] = networkSize(request.model);
  const size = workingSize(width, height, tuning.workingPixels ?? workingBudget(networkWidth, networkHeight));
  const decoded = decodeSource(request.source, {
    network: { width: networkWidth, height: networkHeight },
    networkKernel: request.model.spec.inputKernel,
    working: size,
    allocate,
  });
  const prediction = observed(predictMatte(await decoded.networkInput, request.model, deps.runtime, deps.models, signal));
  // While the network runs on the inference thread, this thread computes what the refinement needs
  // of the guide alone (the network's matte has its fixed input size).
  const guide = await decoded.working;
  const refineOptions = tuning.refine ?? {};
  const statistics = refineOptions.method === "bilinear" ? undefined : guideStatistics(guide, refineRadius(guide, networkWidth, networkHeight, refineOptions), allocate);
  const coarse = await prediction;
  clock.done("segment");
  const refined = refineMatte(coarse, guide, refineOptions, statistics, allocate);
  clock.done("refine");
  // With both side means equal to the image, the blur-fusion update returns the image itself.
  const sides = request.onlyMask
    ? undefined
    : tuning.keepSourceColours
      ? { foreground: guide, background: guide }
      : blurFusionMeans(guide, refined.alpha, blurFusionRadii(size.width, size.height), sideMeansNeeded(classifyField(refined.coefficients), size.width, size.height), allocate);
  clock.done("foreground");
  const { rgb, alpha: sourceAlpha } = await decoded.full;
  clock.done("decode");
  const sources = { rgb, sourceAlpha, coefficients: refined.coefficients };
  if (!sides) {
    // The matte stays grey (PNG, JPEG; WebP has no grey).
    const composed: ColourAndAlpha = { colour: composeMatte(sources) };
    clock.done("compose");
    const image = await encodeImage(composed, request.outputFormat, { deflate: RESULT_DEFLATE });
    clock.done("encode");
    return { image, timings: clock.timings };
  }
  const fill = await prepareFill(request.fill, rgb, guide, refined.alpha.data, deps.limits);
  clock.done("fill");
  // The full-resolution colour is composed over in place (nothing reads `rgb` after this), band by
  // band as the encoder reaches each, so composing overlaps the deflate of the bands before.
  const composition = composeInBands(sources, sides, fill);
  const image = await encodeImage(composition.image, request.outputFormat, { deflate: RESULT_DEFLATE, produceRows: (y, rows) => composition.rows(y, y + rows) });
  clock.done("compose and encode");
  return { image, timings: clock.timings };
}

async function prepareFill(
  fill: FillRequest,
  rgb: RawImage,
  guide: { data: Float32Array; width: number; height: number; channels: number },
  alpha: Float32Array,
  limits: ImageLimits,
): Promise<BackgroundFill> {
  switch (fill.kind) {
    case "transparent":
    case "color":
      return fill;
    case "image":
      return { kind: "image", image: await coverFit(fill.bytes, rgb.width, rgb.height, limits) };
    case "blur": {
      // Sigma is given in source pixels; the blur runs on the working copy.
      const sigma = fill.sigma > 0 ? fill.sigma : defaultBlurSigma(rgb.width, rgb.height);
      const scale = guide.width / rgb.width;
      const background = blurredBackground(guide, { data: alpha, width: guide.width, height: guide.height, channels: 1 }, sigma * scale);
      return { kind: "blur", background };
    }
  }
}
