/**
 * Stable Diffusion family text-to-image models, run from their ONNX exports (Optimum layout, see
 * workers/generation/diffusion/export-layout.ts) by workers/generation/diffusion.
 *
 * Only files whose sha256 is known are listed in `source.files`: today that is OpenAI's CLIP merges
 * file (the tokenizer fallback), pinned like every other file. The exports' own files (graphs,
 * tokenizer, scheduler config) have public origins listed in `details.unpinnedFiles` but no
 * recorded checksum yet; until someone downloads them once and pins them (scripts/pin-weights.ts),
 * an operator installs a model by copying its export into `ATELIER_MODELS_DIR/<id>/`, and the
 * generator answers 503 naming the files still missing.
 */
import type { CatalogEntry, GenerationConstraints, GraphSource, WeightFile } from "../catalog-types.js";
import { DIFFUSION_GRAPH_SOURCES } from "../../generation/diffusion/export-layout.js";
import { CLIP_MERGES_FILE } from "./clip-merges.js";

const CLIP_MERGES: WeightFile = CLIP_MERGES_FILE;

/** Files of an Optimum-layout export, for `details.unpinnedFiles` (origins known, checksums not). */
const EXPORT_FILE_NAMES = [
  "text_encoder/model.onnx",
  "unet/model.onnx",
  "vae_decoder/model.onnx",
  "tokenizer/vocab.json",
  "tokenizer/merges.txt",
  "tokenizer/special_tokens_map.json",
  "tokenizer/tokenizer_config.json",
  "scheduler/scheduler_config.json",
];

function unpinned(base: string, names: readonly string[] = EXPORT_FILE_NAMES): { name: string; url: string }[] {
  return names.map((name) => ({ name, url: `${base}/${name}` }));
}

/**
 * The export's graphs with a UNet whose weights sit in `dataFile` (full-precision UNets exceed
 * protobuf's 2 GB). `externalData` is the field the runtime change adds to GraphSource (load by
 * path); until then it is ignored and such a UNet cannot load.
 */
function withExternalUnet(dataFile: string): Record<string, GraphSource> {
  return { ...DIFFUSION_GRAPH_SOURCES, unet: { onnx: "unet/model.onnx", externalData: [dataFile] } as GraphSource };
}

function sizes(defaultSize: number): GenerationConstraints {
  return { defaultWidth: defaultSize, defaultHeight: defaultSize, minSize: 256, maxWidth: 1024, maxHeight: 1024, sizeMultiple: 8 };
}

const SAMPLERS_NOTE = "Schedulers: euler, euler-ancestral, dpmpp-2m-karras, dpmpp-2m, lcm, turbo.";

export const DIFFUSION_MODELS: CatalogEntry[] = [
  {
    id: "sd-turbo",
    task: "generate",
    name: "SD-Turbo (Stable Diffusion 2.1 distilled, one step)",
    description:
      "Photographic and illustrative scenes from a text prompt in a single denoising step (adversarial diffusion distillation of SD 2.1), " +
      `512x512 by default. No negative prompt or guidance: the distilled model is run without them. ${SAMPLERS_NOTE}`,
    license: "Stability AI Community License (free below USD 1M annual revenue; enterprise licence above)",
    nonCommercial: true,
    attribution: "SD-Turbo by Stability AI; ONNX export by the ONNX Runtime team.",
    homepage: "https://huggingface.co/stabilityai/sd-turbo",
    source: { kind: "files", files: [CLIP_MERGES] },
    graphs: DIFFUSION_GRAPH_SOURCES,
    generation: sizes(512),
    photographic: true,
    details: {
      family: "stable-diffusion",
      diffusion: { scheduler: "turbo", steps: 1, guidanceScale: 0, padToken: "!" },
      export: "ONNX Runtime's export (half-precision tensors; runs through the float32 facade)",
      unpinnedFiles: unpinned("https://huggingface.co/onnxruntime/sd-turbo/resolve/main"),
    },
  },
  {
    id: "stable-diffusion-1-5",
    task: "generate",
    name: "Stable Diffusion v1.5",
    description: `Text-to-image latent diffusion at 512x512 (CLIP ViT-L/14 text encoder), 25 DPM-Solver++ steps by default. ${SAMPLERS_NOTE}`,
    license: "CreativeML OpenRAIL-M (use restrictions apply; commercial use allowed)",
    nonCommercial: false,
    attribution: "Stable Diffusion v1.5 by Runway and Stability AI (CompVis latent diffusion).",
    homepage: "https://huggingface.co/stable-diffusion-v1-5/stable-diffusion-v1-5",
    source: { kind: "files", files: [CLIP_MERGES] },
    graphs: withExternalUnet("unet/weights.pb"),
    generation: sizes(512),
    photographic: true,
    details: {
      family: "stable-diffusion",
      diffusion: { scheduler: "dpmpp-2m-karras", steps: 25, guidanceScale: 7.5 },
      export: "diffusers' ONNX export (revision `onnx`, float32; the UNet keeps its weights in unet/weights.pb, which needs the runtime to load by path)",
      unpinnedFiles: unpinned("https://huggingface.co/stable-diffusion-v1-5/stable-diffusion-v1-5/resolve/onnx", [...EXPORT_FILE_NAMES, "unet/weights.pb"]),
    },
  },
  {
    id: "stable-diffusion-2-1",
    task: "generate",
    name: "Stable Diffusion v2.1 (768)",
    description: `Text-to-image latent diffusion at 768x768 (OpenCLIP ViT-H text encoder, v-prediction), 25 DPM-Solver++ steps by default. ${SAMPLERS_NOTE}`,
    license: "CreativeML Open RAIL++-M (use restrictions apply; commercial use allowed)",
    nonCommercial: false,
    attribution: "Stable Diffusion v2.1 by Stability AI.",
    homepage: "https://huggingface.co/stabilityai/stable-diffusion-2-1",
    source: { kind: "files", files: [CLIP_MERGES] },
    graphs: withExternalUnet("unet/model.onnx_data"),
    generation: sizes(768),
    photographic: true,
    details: {
      family: "stable-diffusion",
      diffusion: { scheduler: "dpmpp-2m-karras", steps: 25, guidanceScale: 7.5, padToken: "!" },
      export: "`optimum-cli export onnx --model stabilityai/stable-diffusion-2-1 <dir>` (no published ONNX export is pinned here)",
      unpinnedFiles: [],
    },
  },
  {
    id: "lcm-dreamshaper-v7",
    task: "generate",
    name: "LCM Dreamshaper v7 (Latent Consistency Model, 4 steps)",
    description: `Dreamshaper v7 (an SD 1.5 fine-tune) distilled into a Latent Consistency Model: 512x512 in 4 steps, guidance embedded in the UNet. ${SAMPLERS_NOTE}`,
    license: "MIT (model card); Dreamshaper v7 base under CreativeML OpenRAIL-M",
    nonCommercial: false,
    attribution: "LCM_Dreamshaper_v7 by Simian Luo et al. (Latent Consistency Models), from Dreamshaper v7 by Lykon.",
    homepage: "https://huggingface.co/SimianLuo/LCM_Dreamshaper_v7",
    source: { kind: "files", files: [CLIP_MERGES] },
    graphs: withExternalUnet("unet/model.onnx_data"),
    generation: sizes(512),
    photographic: true,
    details: {
      family: "stable-diffusion",
      diffusion: { scheduler: "lcm", steps: 4, guidanceScale: 8 },
      export: "`optimum-cli export onnx --model SimianLuo/LCM_Dreamshaper_v7 <dir>` (UNet with timestep_cond; no published ONNX export is pinned here)",
      unpinnedFiles: [],
    },
  },
];
