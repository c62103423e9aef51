/**
 * Runs an image-to-image network (an upscaler, a style) over an image of any size, choosing how its
 * pixels cross to the inference thread: an RGB image goes through the byte graph (byte-image-graph.ts:
 * the graph converts its own pixels), in one tile when it fits (no blending) or in tiles whose overlap
 * bands are blended from bytes (tiling.ts runTiledBytes); grey images and formats the byte graph
 * cannot express take the float graph in blended tiles. Both sessions may be loaded; the runtime keys them apart.
 * The session stays pinned for the whole image, and the caller's signal is checked between tiles.
 */
import { AtelierError } from "../../core/errors.js";
import type { ImageTensorFormat, InferenceGeometry } from "../../models/catalog/catalog-types.js";
import type { ModelLoader, ModelOptions, ModelRuntime } from "../onnx/onnx-runtime.js";
import { byteSessionKey, withByteImageIO } from "./byte-image-graph.js";
import { byteConversion } from "./image-tensor.js";
import type { RawImage } from "./raw-image.js";
import { fitsOneTile, runOneByteTile, runTiled, runTiledBytes } from "./tiling.js";

export interface ImageNetwork {
  /** Who runs, for errors: `model "esrgan-slim"`, `style "udnie"`. */
  label: string;
  /** The float graph's session key in the runtime; the byte graph's is derived from it. */
  key: string;
  /** Loads the float graph (the byte graph is made from it). */
  load: () => Promise<Uint8Array>;
  options: ModelOptions;
  format: ImageTensorFormat;
  input: string;
  output: string;
}

export interface ImageNetworkRun {
  /** Output pixels per input pixel along each axis. */
  scale: number;
  geometry: InferenceGeometry;
  signal?: AbortSignal;
  /** Wraps each network run (one per tile), e.g. to time it. */
  aroundRun?: <T>(run: () => Promise<T>) => Promise<T>;
}

/** `image` (RGB, or grey for a luma network) through `network`, `run.scale` times larger. */
export async function runImageNetwork(image: RawImage, runtime: ModelRuntime, network: ImageNetwork, run: ImageNetworkRun): Promise<RawImage> {
  const { label, key, load, options, format, input, output } = network;
  const { scale, geometry, signal } = run;
  const around = run.aroundRun ?? (<T>(work: () => Promise<T>) => work());
  const missing = () => new AtelierError("INTERNAL", `The ${label} returned no tensor "${output}".`);
  const bytes = image.channels === 3 ? byteConversion(format) : undefined;
  if (bytes) {
    const byteLoad: ModelLoader = async () => withByteImageIO(await load(), bytes, input, output);
    const runner = fitsOneTile(image, { scale, geometry }) ? runOneByteTile : runTiledBytes;
    return runtime.model(byteSessionKey(key), byteLoad, options).pin(
      (session) =>
        runner(image, {
          scale,
          geometry,
          signal,
          runTile: async (tile) => (await around(() => session.runToBytes({ [input]: tile }, { signal, handOver: true })))[output] ?? Promise.reject(missing()),
        }),
      { signal },
    );
  }
  return runtime.model(key, load, options).pin(
    (session) =>
      runTiled(image, {
        format,
        scale,
        geometry,
        signal,
        runTile: async (tile) => (await around(() => session.run({ [input]: tile }, { signal, handOver: true })))[output] ?? Promise.reject(missing()),
      }),
    { signal },
  );
}
