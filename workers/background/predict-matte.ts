/**
 * Runs a segmentation network on an image: stretch to the network's fixed input size (as the models
 * were trained: MediaPipe, SINet and IMG.LY's ISNet pipeline all resize without keeping the aspect
 * ratio; pixel-centred, network-input.ts), normalise as the catalog says, run, and read the
 * foreground channel back as a coarse matte on 0..1 at the network's resolution.
 */
import { AtelierError } from "../../core/errors.js";
import { withByteImageInput } from "../image/byte-image-graph.js";
import { byteInputTable, imageToTensor } from "../image/image-tensor.js";
import type { RawImage } from "../image/raw-image.js";
import type { ModelLoader } from "../model-loader.js";
import { onlyOutputs } from "../onnx/graph-outputs.js";
import { initializersAsConstants } from "../onnx/initializer-inputs.js";
import type { ModelRuntime } from "../onnx/onnx-runtime.js";
import { sessionSettings } from "../onnx/session-settings.js";
import type { FloatPlanes } from "./box-filter.js";
import type { ChosenModel } from "../../models/requests/background-model-choice.js";
import { resizeForNetwork } from "./network-input.js";

const MiB = 1024 * 1024;

/** The network's input and output tensors as the catalog declares them. */
function tensors(model: ChosenModel) {
  const { entry } = model;
  const input = entry.signature?.inputs[0];
  const output = entry.signature?.outputs[0];
  const size = entry.geometry?.fixedSize;
  if (!input || !output || !size || !entry.imageFormat) {
    throw new AtelierError("INTERNAL", `The catalog record of "${entry.id}" lacks the signature, fixed size or image format segmentation needs.`);
  }
  return { input, output, size, format: entry.imageFormat };
}

/** The network's fixed input size, width and height. */
export function networkSize(model: ChosenModel): [number, number] {
  return tensors(model).size;
}

/**
 * The ONNX graph the session runs: the catalogued one with only the matte among its outputs (ISNet's
 * side outputs and decoder features would be copied out of every run: graph-outputs.ts), and its
 * pixel conversion built in where it can be.
 */
export function segmentationGraph(model: ChosenModel, models: ModelLoader): () => Promise<Uint8Array> {
  const load = models.graphLoader(model.entry, "default");
  const { format, input, output } = tensors(model);
  const table = byteInputTable(format);
  const prepare = (bytes: Uint8Array) => (table ? withByteImageInput(bytes, table, format.layout, input.name) : bytes);
  return async () => prepare(onlyOutputs(initializersAsConstants(await load()), [output.name]));
}

/**
 * The session handle for a model (lazy: nothing loads until it runs). Weights an old exporter listed
 * as inputs are made constants first, so onnxruntime optimizes them (initializer-inputs.ts).
 */
export function segmentationSession(model: ChosenModel, runtime: ModelRuntime, models: ModelLoader) {
  return runtime.model(models.sessionKey(model.entry, "default"), segmentationGraph(model, models), {
    workingBytes: model.spec.workingMiB * MiB,
    session: sessionSettings(model.entry),
  });
}

/**
 * The image at the network's input size, as the network's input tensor: the 8-bit pixels themselves
 * where the graph looks their values up (every channel normalised alike: ISNet, the selfie model; a
 * 1024 x 1024 float tensor is 12 MB made by a JavaScript loop), else float32 from imageToTensor.
 */
export async function segmentationInput(rgb: RawImage, model: ChosenModel) {
  const { size, format, input } = tensors(model);
  const [width, height] = size;
  // Reductions widen the kernel, so even bilinear averages a 12 MP photo rather than aliasing it.
  const same = rgb.width === width && rgb.height === height;
  const resized = await resizeForNetwork(rgb, { width, height }, model.spec.inputKernel);
  if (!byteInputTable(format)) return { [input.name]: imageToTensor(resized, format) };
  // A tensor of its own: the run may take it over, and an image of the network's size is the caller's.
  return { [input.name]: { data: same ? resized.data.slice() : resized.data, dims: [1, height, width, 3] } };
}

/** The foreground channel of the network's output tensor, clamped to 0..1 (in place where it is one plane). */
export function readMatte(outputs: Record<string, { data: Float32Array; dims: number[] }>, model: ChosenModel): FloatPlanes {
  const { output } = tensors(model);
  const tensor = outputs[output.name];
  if (!tensor || tensor.dims.length !== 4) {
    throw new AtelierError("INTERNAL", `Model "${model.entry.id}" returned no 4-dimensional "${output.name}" tensor.`);
  }
  const nhwc = output.layout === "NHWC";
  const [, d1, d2, d3] = tensor.dims as [number, number, number, number];
  const [channels, height, width] = nhwc ? [d3, d1, d2] : [d1, d2, d3];
  const channel = model.spec.maskChannel;
  if (channel >= channels) throw new AtelierError("INTERNAL", `Model "${model.entry.id}" returned ${channels} channels; the matte is channel ${channel}.`);
  const pixels = width * height;
  // A planar channel (or the only one) is read where it lies, clamped in place: the run's outputs
  // are this call's own.
  if (!nhwc || channels === 1) {
    const data = tensor.data.subarray(channel * pixels, (channel + 1) * pixels);
    for (let p = 0; p < pixels; p++) {
      const value = data[p]!;
      data[p] = value <= 0 ? 0 : value >= 1 ? 1 : value;
    }
    return { data, width, height, channels: 1 };
  }
  const data = new Float32Array(pixels);
  for (let p = 0; p < pixels; p++) {
    const value = tensor.data[p * channels + channel]!;
    data[p] = value <= 0 ? 0 : value >= 1 ? 1 : value;
  }
  return { data, width, height, channels: 1 };
}

/** Runs the network on `rgb` and returns its coarse matte at the network's resolution. */
export async function predictMatte(rgb: RawImage, model: ChosenModel, runtime: ModelRuntime, models: ModelLoader, signal?: AbortSignal): Promise<FloatPlanes> {
  const feeds = await segmentationInput(rgb, model);
  // The tensor is this call's own (12 MB for ISNet): moved to the inference thread, not copied.
  const outputs = await segmentationSession(model, runtime, models).run(feeds, { signal, handOver: true });
  return readMatte(outputs, model);
}
