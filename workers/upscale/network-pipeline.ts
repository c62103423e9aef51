/**
 * Upscaling with a network, as ordered steps over raw pixels:
 *
 * 1. split off alpha (grey inputs become RGB, or stay one channel for a luma network);
 * 2. the network at its native factor, tiled (optionally as a self-ensemble of eight orientations,
 *    self-ensemble.ts);
 * 3. for a luma-only network, chroma from a Lanczos-3 resample of the colour;
 * 4. a Lanczos-3 resample from the native factor to the requested one, when they differ;
 * 5. grey output for grey input (BT.601 luma of the network's RGB);
 * 6. alpha resampled on its own with Lanczos-3 (a network trained on photographs would invent texture
 *    in a mask) and joined back.
 *
 * Memory: the input, the network's output at its native factor and the final output, plus one tile
 * inside the network. The native output is at most 4 times the final one (x2 through LSDIR's x4; x5
 * through an x8 network is 2.6 times), and the final output is bounded by ATELIER_MAX_OUTPUT_PIXELS,
 * so a job stays under about 20 bytes per allowed output pixel whatever the input (about 340 MB at
 * the default 16.8 MP).
 *
 * Every classical step keeps the networks' pixel grid (lanczosResize).
 */
import { splitAlpha, mergeAlpha } from "../image/alpha.js";
import type { RawImage } from "../image/raw-image.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { mergeGreyAlpha, replaceLuma, toGrey } from "./colour-planes.js";
import { lanczosResize } from "./lanczos-upscaler.js";
import { runUpscaleNetwork, type NetworkDependencies } from "./network-upscaler.js";
import { selfEnsemble } from "./self-ensemble.js";
import type { UpscalePath } from "../../models/requests/upscale-choice.js";

export interface NetworkUpscale {
  image: RawImage;
  /** What was done, for the response, e.g. `["esrgan-slim x8", "lanczos3 to x6"]`. */
  steps: string[];
}

export interface NetworkUpscaleOptions {
  /**
   * Produce grey (1 channel, 2 with alpha). Default: when `source` has 1 or 2 channels. Decoders may
   * hand grey images over as RGB (sharp does), so the caller says what the file was.
   */
  grey?: boolean;
  /** Checked between tiles; an abort rejects with CANCELLED. */
  signal?: AbortSignal;
  /** Run the network on the eight orientations of the image and average them (eight times the time). */
  selfEnsemble?: boolean;
}

/** Upscales `source` (1 to 4 channels) by `scale` with the network of `entry` along `path`. */
export async function upscaleWithNetwork(
  source: RawImage,
  entry: CatalogEntry,
  scale: number,
  path: UpscalePath,
  deps: NetworkDependencies,
  options: NetworkUpscaleOptions = {},
): Promise<NetworkUpscale> {
  const { nativeScale } = path;
  const { signal } = options;
  const grey = options.grey ?? source.channels <= 2;
  const lumaNetwork = entry.imageFormat?.channelOrder === "Y";
  const { rgb, alpha } = splitAlpha(source);
  const steps: string[] = [];
  const network = (input: RawImage) =>
    options.selfEnsemble
      ? selfEnsemble(input, (oriented) => runUpscaleNetwork(oriented, entry, nativeScale, deps, signal))
      : runUpscaleNetwork(input, entry, nativeScale, deps, signal);
  const ran = `${entry.id} x${nativeScale}${options.selfEnsemble ? " (self-ensemble of 8)" : ""}`;

  let image: RawImage;
  if (lumaNetwork && grey) {
    image = await network(toGrey(rgb));
    steps.push(ran);
  } else if (lumaNetwork) {
    const luma = await network(rgb);
    const colour = await lanczosResize(rgb, rgb.width * nativeScale, rgb.height * nativeScale, signal);
    image = replaceLuma(colour, luma);
    steps.push(`${ran} (luma)`, `chroma: lanczos3 x${nativeScale}`);
  } else {
    image = await network(rgb);
    steps.push(ran);
  }

  const width = source.width * scale;
  const height = source.height * scale;
  if (path.finalResample !== "none") {
    image = await lanczosResize(image, width, height, signal);
    steps.push(`lanczos3 to x${scale}`);
  }
  if (grey) image = toGrey(image);
  if (!alpha) return { image, steps };

  const resizedAlpha = await lanczosResize(alpha, width, height, signal);
  steps.push(`alpha: lanczos3 x${scale}`);
  return { image: grey ? mergeGreyAlpha(image, resizedAlpha) : mergeAlpha(image, resizedAlpha), steps };
}
