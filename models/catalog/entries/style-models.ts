/** Style-transfer models: one record per style, the value clients pass as `style`. */
import type { CatalogEntry } from "../catalog-types.js";
import { pinnedFiles } from "../pinned-files.js";
import { ML5_STYLES, NC16_STYLES } from "../weight-file-sets.js";

const ML5_PAINTINGS: Record<(typeof ML5_STYLES)[number], { title: string; preview: string; lengstrom: boolean }> = {
  la_muse: { title: "La Muse (Pablo Picasso)", preview: "Bold cubist planes in warm ochres, blues and blacks.", lengstrom: true },
  mathura: { title: "Mathura", preview: "Black-and-white ornamental line pattern.", lengstrom: false },
  matilde_perez: {
    title: "Matilde Pérez (op art)",
    preview: "Blue and white op-art stripes that all but replace the picture; strength around 0.5 keeps the subject visible.",
    lengstrom: false,
  },
  matta: { title: "Roberto Matta", preview: "Surrealist swirls in fiery reds and deep blues.", lengstrom: false },
  rain_princess: { title: "Rain Princess (Leonid Afremov)", preview: "Thick palette-knife strokes in glowing rainy-night colours.", lengstrom: true },
  scream: { title: "The Scream (Edvard Munch)", preview: "Wavy expressionist bands of orange sky and blue.", lengstrom: true },
  udnie: { title: "Udnie (Francis Picabia)", preview: "Fragmented abstract shapes in muted blues and browns.", lengstrom: true },
  wave: { title: "The Great Wave off Kanagawa (Hokusai)", preview: "Japanese woodblock curls in Prussian blue and foam white.", lengstrom: true },
  wreck: { title: "The Shipwreck of the Minotaur (J. M. W. Turner)", preview: "Stormy romantic sea-light in golds and greys.", lengstrom: true },
};

const NC16_PAINTINGS: Record<(typeof NC16_STYLES)[number], { title: string; preview: string }> = {
  candy: { title: "Candy", preview: "Bright candy-coloured patches with dark outlines." },
  mosaic: { title: "Mosaic", preview: "Stained-glass tiles in saturated colours." },
  "rain-princess": { title: "Rain Princess (Leonid Afremov), small network", preview: "Palette-knife strokes in rainy-night colours." },
  udnie: { title: "Udnie (Francis Picabia), small network", preview: "Abstract shapes in muted blues and browns." },
};

const fastStyleSignature = {
  inputs: [{ name: "input", dtype: "float32" as const, shape: ["N", 3, "H", "W"], layout: "NCHW" as const, range: [0, 255] as [number, number] }],
  outputs: [{ name: "output", dtype: "float32" as const, shape: ["N", 3, "H", "W"], layout: "NCHW" as const, range: [0, 255] as [number, number] }],
};

const ml5Entries: CatalogEntry[] = ML5_STYLES.map((style) => {
  const id = style.replaceAll("_", "-");
  const painting = ML5_PAINTINGS[style];
  return {
    id,
    task: "style-transfer",
    name: painting.title,
    description:
      `Fast neural style transfer (Johnson et al. network, ml5.js weights) in the style of ${painting.title}. ` +
      "Converted to ONNX at install time from the original deeplearn.js checkpoint.",
    license: painting.lengstrom
      ? "Research and non-commercial use (lengstrom/fast-style-transfer: contact the author for commercial use); repository MIT"
      : "MIT",
    nonCommercial: painting.lengstrom,
    attribution: painting.lengstrom
      ? "Style network by Logan Engstrom (fast-style-transfer), exported by ml5.js."
      : "Style network trained by the ml5.js community (ml5-data-and-models, MIT).",
    homepage: "https://github.com/ml5js/ml5-data-and-models",
    source: {
      kind: "files",
      files: pinnedFiles(id),
      conversions: [{ from: "fast-style-checkpoint", folder: ".", output: "model.onnx" }],
    },
    graphs: { default: { onnx: "model.onnx" } },
    signature: fastStyleSignature,
    imageFormat: { layout: "NCHW", channelOrder: "RGB", range: [0, 255] },
    geometry: { sizeMultiple: 4, tileSize: 1024, tileOverlap: 64 },
    details: { preview: painting.preview, family: "fast-style-ml5" },
  };
});

const nc16Entries: CatalogEntry[] = NC16_STYLES.map((style) => {
  const id = `${style}-lite`;
  const painting = NC16_PAINTINGS[style];
  return {
    id,
    task: "style-transfer",
    name: painting.title,
    description:
      `Small fast-neural-style network (half the channels of the PyTorch example network, retrained by gnsmrky) in the style "${painting.title}". ` +
      "Exported at a fixed 256x256; made size-independent when loaded, so it paints at the working size like the other styles. Fastest and lowest quality tier.",
    license: "No licence stated for the weights (training code BSD-3-Clause, pytorch/examples)",
    nonCommercial: false,
    licenseStated: false,
    attribution: "Weights by gnsmrky (pytorch-fast-neural-style-onnxjs).",
    homepage: "https://github.com/gnsmrky/pytorch-fast-neural-style-onnxjs",
    source: { kind: "files", files: pinnedFiles(id) },
    graphs: { default: { onnx: `${style}_nc16_256x256_onnxjs014.onnx` } },
    // As loaded: the file declares 1x3x256x256; workers/style/dynamic-style-graph.ts opens H and W.
    signature: {
      inputs: [{ name: "input.1", dtype: "float32", shape: [1, 3, "H", "W"], layout: "NCHW", range: [0, 255] }],
      outputs: [{ name: "395", dtype: "float32", shape: [1, 3, "H", "W"], layout: "NCHW", range: [0, 255] }],
    },
    imageFormat: { layout: "NCHW", channelOrder: "RGB", range: [0, 255] },
    // Two stride-2 convolutions and two 2x upsamplings: sides must be multiples of 4 to come back whole.
    geometry: { sizeMultiple: 4, tileSize: 1024, tileOverlap: 64 },
    details: { preview: painting.preview, family: "fast-style-nc16" },
  };
});

export const STYLE_MODELS: CatalogEntry[] = [...ml5Entries, ...nc16Entries];
