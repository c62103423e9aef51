/** Shared set-up for the upscaling tests: a runtime over mirror-installed models, photo crops, a fake network. */
import os from "node:os";
import sharp from "sharp";
import { ModelLoader } from "../../workers/model-loader.js";
import { ModelStore } from "../../models/store/model-store.js";
import { ModelRuntime, type PinnedModel } from "../../workers/onnx/onnx-runtime.js";
import type { ByteTensor, TensorData } from "../../workers/onnx/tensor-data.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import type { NetworkDependencies } from "../../workers/upscale/network-upscaler.js";
import { installModels } from "../support/installed-models.js";
import { hasMirrorModel, testPhoto } from "../support/test-assets.js";

/** Mirror folder of each mirror-installed upscale model. */
const MIRROR_FOLDERS: Record<string, string> = { "lsdir-compact-x4": "superres-lsdir-compact-x4", "espcn-x3": "superres-espcn-x3" };

/** Whether the mirror has the model (npm-shipped ESRGAN always counts); logs a notice when not. */
export function mirrorHas(id: string): boolean {
  const folder = MIRROR_FOLDERS[id];
  return folder === undefined || hasMirrorModel(folder);
}

const quiet = { debug() {}, info() {}, warn() {} };

/** A runtime and loader like a worker's, over `modelsDir` with the mirror models given installed into it. */
export async function networkDependencies(modelsDir: string, ids: string[]): Promise<NetworkDependencies & { modelsDir: string }> {
  await installModels(modelsDir, ids.filter((id) => id in MIRROR_FOLDERS && mirrorHas(id)));
  return {
    modelsDir,
    runtime: new ModelRuntime({ threads: os.availableParallelism(), memoryBudgetBytes: 2 * 1024 ** 3, logger: quiet }),
    models: new ModelLoader(new ModelStore(modelsDir), { disableNonCommercial: false }),
  };
}

/** A `width` x `height` crop at (`left`, `top`) of a test photo, RGB (grey photos as 1 channel with `grey`). */
export async function photoCrop(
  name: Parameters<typeof testPhoto>[0],
  region: { left: number; top: number; width: number; height: number },
  options: { grey?: boolean } = {},
): Promise<RawImage> {
  let pipeline = sharp(testPhoto(name)).removeAlpha().extract(region);
  if (options.grey) pipeline = pipeline.toColourspace("b-w");
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels as RawImage["channels"] };
}

/** `image` with an alpha disc: opaque inside a circle of radius `min(w, h) / 3`, transparent outside. */
export function withAlphaDisc(image: RawImage): RawImage {
  const { width, height, channels } = image;
  const out = new Uint8Array(width * height * (channels + 1));
  for (let p = 0; p < width * height; p++) {
    const x = p % width;
    const y = Math.floor(p / width);
    for (let c = 0; c < channels; c++) out[p * (channels + 1) + c] = image.data[p * channels + c]!;
    out[p * (channels + 1) + channels] = Math.hypot(x + 0.5 - width / 2, y + 0.5 - height / 2) < Math.min(width, height) / 3 ? 255 : 0;
  }
  return { data: out, width, height, channels: (channels + 1) as RawImage["channels"] };
}

/**
 * A runtime that never loads anything: every tile is "upscaled" by pixel replication, `onRun` sees
 * each run. For pipeline logic (cancellation, channels) without model cost.
 */
export function fakeNetwork(onRun: (run: number) => void = () => {}): NetworkDependencies & { runs: () => number } {
  let runs = 0;
  const replicate = (tile: TensorData, factor: number): TensorData => {
    const [n, c, h, w] = tile.dims as [number, number, number, number];
    const data = new Float32Array(n * c * h * factor * w * factor);
    for (let ch = 0; ch < c; ch++) {
      for (let y = 0; y < h * factor; y++) {
        for (let x = 0; x < w * factor; x++) data[(ch * h * factor + y) * w * factor + x] = tile.data[(ch * h + Math.floor(y / factor)) * w + Math.floor(x / factor)]!;
      }
    }
    return { data, dims: [n, c, h * factor, w * factor] };
  };
  // The same for the `[1, H, W, 3]` uint8 tiles of graphs that take bytes (byte-image-graph.ts).
  const replicateBytes = (tile: ByteTensor, factor: number): ByteTensor => {
    const [n, h, w, c] = tile.dims as [number, number, number, number];
    const data = new Uint8Array(n * h * factor * w * factor * c);
    for (let y = 0; y < h * factor; y++) {
      for (let x = 0; x < w * factor; x++) {
        const from = (Math.floor(y / factor) * w + Math.floor(x / factor)) * c;
        data.set(tile.data.subarray(from, from + c), (y * w * factor + x) * c);
      }
    }
    return { data, dims: [n, h * factor, w * factor, c] };
  };
  const runtime = {
    model: (key: string) => ({
      key,
      pin: async <T>(work: (model: PinnedModel) => Promise<T>) =>
        work({
          key,
          signature: { inputs: [], outputs: [] },
          run: async (feeds) => {
            onRun(++runs);
            const factor = Number(/x(\d+)$/.exec(key)![1]);
            return { output: replicate(Object.values(feeds)[0] as TensorData, factor) };
          },
          runToBytes: async (feeds) => {
            onRun(++runs);
            const factor = Number(/x(\d+):bytes$/.exec(key)![1]);
            return { output: replicateBytes(Object.values(feeds)[0] as ByteTensor, factor) };
          },
        }),
    }),
  };
  const models = { sessionKey: (entry: { id: string }, graph: string) => `${entry.id}/${graph}`, graphLoader: () => async () => new Uint8Array() };
  return { runtime: runtime as unknown as ModelRuntime, models: models as unknown as ModelLoader, runs: () => runs };
}
