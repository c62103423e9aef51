/** Text-to-image models. */
import type { CatalogEntry } from "../catalog-types.js";
import { pinnedFiles } from "../pinned-files.js";
import { SMALL_GRAPH_SESSION } from "./small-graph-session.js";

export const GENERATION_MODELS: CatalogEntry[] = [
  {
    id: "cvae-quickdraw",
    task: "generate",
    name: "Quick, Draw! doodles (conditional VAE)",
    description:
      "Draws a Quick, Draw! style doodle of one of 50 things (apple, owl, ice cream, light bulb, …) named in the prompt. " +
      "A small conditional VAE decoder by the ml5.js team; it does not draw scenes or photographs.",
    license: "MIT",
    nonCommercial: false,
    attribution: "ml5.js CVAE model (MIT), trained on the Google Quick, Draw! dataset (CC BY 4.0).",
    homepage: "https://github.com/ml5js/ml5-data-and-models",
    source: {
      kind: "files",
      files: pinnedFiles("cvae-quickdraw"),
      conversions: [
        {
          from: "tfjs-layers",
          folder: ".",
          output: "model.onnx",
          tensorNames: { latent_input: "latent", label: "label", conv2d_transpose_3: "image" },
        },
      ],
    },
    graphs: { default: { onnx: "model.onnx" } },
    signature: {
      inputs: [
        { name: "latent", dtype: "float32", shape: ["batch", 16], range: [0, 1] },
        { name: "label", dtype: "float32", shape: ["batch", 51], description: "one-hot; index = label position + 1" },
      ],
      outputs: [{ name: "image", dtype: "float32", shape: ["batch", 1, 28, 28], layout: "NCHW", range: [0, 1] }],
    },
    session: SMALL_GRAPH_SESSION,
    // A decoder of one latent per class: no denoising steps, guidance, scheduler or negative prompt to take.
    generation: { defaultWidth: 256, defaultHeight: 256, minSize: 28, maxWidth: 1024, maxHeight: 1024, sizeMultiple: 1, options: [] },
    photographic: false,
  },
];
