/** Segmentation models for background removal. */
import type { CatalogEntry } from "../catalog-types.js";
import { pinnedFiles } from "../pinned-files.js";

export const BACKGROUND_MODELS: CatalogEntry[] = [
  {
    id: "portrait-selfie",
    task: "background-remove",
    name: "MediaPipe Selfie Segmentation",
    description: "Google MediaPipe's person segmentation (general 256x256 variant). People only: small and fast, soft edges.",
    license: "Apache-2.0",
    nonCommercial: false,
    attribution: "MediaPipe Selfie Segmentation, Google LLC; ONNX conversion by Katsuya Hyodo (PINTO0309).",
    source: { kind: "files", files: pinnedFiles("portrait-selfie") },
    graphs: { default: { onnx: "selfie_segmentation.onnx" } },
    signature: {
      inputs: [{ name: "input_1:0", dtype: "float32", shape: [1, 256, 256, 3], layout: "NHWC", range: [0, 1] }],
      outputs: [{ name: "activation_10", dtype: "float32", shape: [1, 256, 256, 1], layout: "NHWC", range: [0, 1], description: "person probability" }],
    },
    imageFormat: { layout: "NHWC", channelOrder: "RGB", range: [0, 1] },
    geometry: { fixedSize: [256, 256] },
  },
  {
    id: "portrait-sinet",
    task: "background-remove",
    name: "SINet portrait segmentation",
    description: "SINet (Park et al.), extremely light person segmentation retrained by Anil Sathyan on portrait datasets. People only; head-and-shoulders shots.",
    license: "MIT",
    nonCommercial: false,
    attribution: "SINet weights by Anil Sathyan (Portrait-Segmentation), MIT.",
    source: { kind: "files", files: pinnedFiles("portrait-sinet") },
    graphs: { default: { onnx: "SINet_Softmax.onnx" } },
    signature: {
      inputs: [{ name: "data", dtype: "float32", shape: [1, 3, 320, 320], layout: "NCHW" }],
      outputs: [{ name: "Softmax/1", dtype: "float32", shape: [1, 2, 320, 320], layout: "NCHW", range: [0, 1], description: "channel 1: person probability" }],
    },
    imageFormat: {
      layout: "NCHW",
      channelOrder: "BGR",
      range: [0, 255],
      mean: [102.890434, 111.25247, 126.91212],
      std: [62.93292 * 255, 62.82138 * 255, 66.355705 * 255],
    },
    geometry: { fixedSize: [320, 320] },
  },
];
