/**
 * Decodes the source, each decode straight from the encoded bytes: at the network's input size, at
 * full resolution (what the output is made of), and at the working size. JPEG's shrink-on-load makes
 * the small ones cheap, so this costs about one decode instead of a decode followed by resizes of the
 * decoded pixels; a small source's working copy is its full decode made smaller (see below).
 *
 * Each decode is its own promise, awaited only by the step that needs it: the network's small input is
 * decoded first and alone, so the network starts as early as it can; the full-resolution decode (most
 * of the decoding time: 12 MP of JPEG) and the working copy then run on libvips' threads while the
 * network runs.
 */
import { splitAlpha, type SplitImage } from "../image/alpha.js";
import type { OpenedImage } from "../../core/open-image.js";
import { rawImagePipeline, readRawImage, type RawImage } from "../image/raw-image.js";
import type { FloatPlanes } from "./box-filter.js";
import { networkInputOf, type NetworkKernel } from "./network-input.js";
import type { Allocate } from "./scratch-plane.js";
import { toUnitPlanes, type Size } from "./working-image.js";

export interface DecodedSource {
  /** Full-resolution colour, 3 channels, and the source's own alpha when it has one. */
  full: Promise<SplitImage>;
  /** The colour at the network's input size, 3 channels. */
  networkInput: Promise<RawImage>;
  /** The colour at the working size, on 0..1 (see working-image.ts). */
  working: Promise<FloatPlanes>;
}

export interface DecodeSizes {
  network: Size;
  /** Kernel for the network's input (see network-input.ts). */
  networkKernel: NetworkKernel;
  working: Size;
  /** Where the working copy's float plane comes from. */
  allocate?: Allocate;
}

/**
 * A promise that never counts as an unhandled rejection: a step that fails or is cancelled early
 * leaves the later decodes (or the network's run) unawaited, and their failure must not take the
 * process down. Whoever awaits the promise still sees the error.
 */
export function observed<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** Sources up to this many pixels have their working copy made from the full decode (see below). */
export const WORKING_FROM_FULL_PIXELS = 2_000_000;

/** Starts the decodes (the network's first); each step awaits the one it needs. */
export function decodeSource(source: OpenedImage, sizes: DecodeSizes): DecodedSource {
  const { width, height } = source.info;
  // Colour only, as RGB: the alpha plane (if any) comes from the full-resolution decode.
  const resized = (size: Size) => readRawImage(source.pipeline().removeAlpha().toColourspace("srgb").resize(size.width, size.height, { fit: "fill", kernel: "linear" }));
  const same = (size: Size) => size.width === width && size.height === height;
  if (same(sizes.network)) {
    const full = readRawImage(source.pipeline()).then(splitAlpha);
    const working = (same(sizes.working) ? full.then(({ rgb }) => rgb) : resized(sizes.working)).then((rgb) => toUnitPlanes(rgb, sizes.allocate));
    return { full: observed(full), networkInput: observed(full.then(({ rgb }) => rgb)), working: observed(working) };
  }
  // The network waits for its input alone: the other decodes start once it is ready, and run beside
  // the network (on 2 cores a full-resolution decode beside the network's would delay its start).
  const networkInput = networkInputOf(source, sizes.network, sizes.networkKernel);
  const started = networkInput.then(
    () => undefined,
    () => undefined,
  );
  const full = started.then(() => readRawImage(source.pipeline())).then(splitAlpha);
  // A triangle filter: close to the area average the working-resolution statistics stand for. Up to
  // WORKING_FROM_FULL_PIXELS the working copy is the full decode made smaller: one decode beside the
  // network rather than two (a 1 MP SINet call's network ended 20 ms sooner, load 4.5); a larger
  // source's full decode outlasts the network, so its working copy is decoded on its own.
  const working = (
    same(sizes.working)
      ? full.then(({ rgb }) => rgb)
      : width * height <= WORKING_FROM_FULL_PIXELS
        ? full.then(({ rgb }) => readRawImage(rawImagePipeline(rgb).resize(sizes.working.width, sizes.working.height, { fit: "fill", kernel: "linear" })))
        : started.then(() => resized(sizes.working))
  ).then((rgb) => toUnitPlanes(rgb, sizes.allocate));
  return { full: observed(full), networkInput: observed(networkInput), working: observed(working) };
}
