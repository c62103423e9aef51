/**
 * Stable Diffusion family text-to-image models, run from their ONNX exports (Optimum layout, see
 * models/catalog/diffusion-export-layout.ts) by workers/generation/diffusion.
 *
 * Published exports come from their repositories on the Hugging Face hub: the catalog names the
 * repository and revision, and each file is verified against the checksum the hub publishes for it
 * at the commit the pull resolves (models/store/hub-files.ts). Once someone has pulled one, its
 * commit and checksums can be pinned here (scripts/pin-weights.ts --hub ID → pinned-hub-exports.json),
 * and later pulls take exactly that commit. Models with no published export that runs on CPU
 * (SD-Turbo, SD 2.1) are exported by the operator and installed with `npm run models -- import ID DIR`.
 * OpenAI's CLIP merges file (the tokenizer fallback) is pinned like every other weight file.
 */
import { GENERATION_OPTIONS, type CatalogEntry, type GenerationConstraints, type GraphSource, type HubExport, type WeightFile } from "../catalog-types.js";
import { DIFFUSION_GRAPH_SOURCES, EXPORT_FILES } from "../diffusion-export-layout.js";
import pinnedHubExports from "../pinned-hub-exports.json" with { type: "json" };
import { CLIP_MERGES_FILE } from "./clip-merges.js";
import { graphFiles } from "../graph-files.js";

const CLIP_MERGES: WeightFile = CLIP_MERGES_FILE;

const HUB_PINS = pinnedHubExports as Record<string, HubExport["pinned"]>;

/** Files of an export the pipeline reads when present. */
const EXPORT_OPTIONAL_FILES = [
  "tokenizer/vocab.json",
  "tokenizer/merges.txt",
  "tokenizer/special_tokens_map.json",
  "tokenizer/tokenizer_config.json",
  EXPORT_FILES.schedulerConfig,
  EXPORT_FILES.unetConfig,
  EXPORT_FILES.vaeConfig,
  EXPORT_FILES.modelIndex,
];

/** The hub repository of model `id`, with the commit and checksums pinned for it if any. */
function hubExport(id: string, repository: string, revision: string, graphs: Record<string, GraphSource>): HubExport {
  const pinned = HUB_PINS[id];
  return { repository, revision, files: graphFiles(graphs), optionalFiles: EXPORT_OPTIONAL_FILES, ...(pinned ? { pinned } : {}) };
}

/** The export's graphs with a UNet whose weights sit in `dataFile` (full-precision UNets exceed protobuf's 2 GB). */
function withExternalUnet(dataFile: string): Record<string, GraphSource> {
  return { ...DIFFUSION_GRAPH_SOURCES, unet: { onnx: EXPORT_FILES.unet, externalData: [dataFile] } };
}

/** diffusers' ONNX conversion (the `onnx` revision of SD 1.5): the UNet's weights in unet/weights.pb. */
const SD15_GRAPHS = withExternalUnet("unet/weights.pb");
/** `optimum-cli export onnx` at float32: the 3.4 GB UNet keeps its weights in unet/model.onnx_data. */
const OPTIMUM_FP32_GRAPHS = withExternalUnet("unet/model.onnx_data");

function sizes(defaultSize: number): GenerationConstraints {
  return { defaultWidth: defaultSize, defaultHeight: defaultSize, minSize: 256, maxWidth: 1024, maxHeight: 1024, sizeMultiple: 8, options: GENERATION_OPTIONS };
}

const SAMPLERS_NOTE = "Schedulers: euler, euler-ancestral, dpmpp-2m-karras, dpmpp-2m, lcm, turbo.";

// Catalog order is preference order: with several installed, the first is the default. LCM comes
// first: 4 steps, MIT, and the one a networked machine can pull directly.
export const DIFFUSION_MODELS: CatalogEntry[] = [
  {
    id: "lcm-dreamshaper-v7",
    task: "generate",
    name: "LCM Dreamshaper v7 (Latent Consistency Model, 4 steps)",
    description: `Dreamshaper v7 (an SD 1.5 fine-tune) distilled into a Latent Consistency Model: 512x512 in 4 steps, guidance embedded in the UNet. ${SAMPLERS_NOTE}`,
    license: "MIT (model card); Dreamshaper v7 base under CreativeML OpenRAIL-M",
    nonCommercial: false,
    attribution: "LCM_Dreamshaper_v7 by Simian Luo et al. (Latent Consistency Models), from Dreamshaper v7 by Lykon.",
    homepage: "https://huggingface.co/SimianLuo/LCM_Dreamshaper_v7",
    source: { kind: "files", files: [CLIP_MERGES], hub: hubExport("lcm-dreamshaper-v7", "SimianLuo/LCM_Dreamshaper_v7", "onnx", OPTIMUM_FP32_GRAPHS) },
    graphs: OPTIMUM_FP32_GRAPHS,
    generation: sizes(512),
    photographic: true,
    details: {
      family: "stable-diffusion",
      diffusion: { scheduler: "lcm", steps: 4, guidanceScale: 8 },
      export: "the repository's `onnx` revision (float32; the UNet takes timestep_cond and keeps its weights in unet/model.onnx_data)",
    },
  },
  {
    id: "sd-turbo",
    task: "generate",
    name: "SD-Turbo (Stable Diffusion 2.1 distilled, one step)",
    description:
      "Photographic and illustrative scenes from a text prompt in a single denoising step (adversarial diffusion distillation of SD 2.1), " +
      `512x512 by default. No negative prompt or guidance: the distilled model is run without them. ${SAMPLERS_NOTE}`,
    license: "Stability AI Community License (free below USD 1M annual revenue; enterprise licence above)",
    nonCommercial: true,
    attribution: "SD-Turbo by Stability AI.",
    homepage: "https://huggingface.co/stabilityai/sd-turbo",
    source: { kind: "files", files: [CLIP_MERGES] },
    graphs: OPTIMUM_FP32_GRAPHS,
    generation: sizes(512),
    photographic: true,
    details: {
      family: "stable-diffusion",
      diffusion: { scheduler: "turbo", steps: 1, guidanceScale: 0, padToken: "!" },
      // onnxruntime/sd-turbo is not used: its UNet and VAE are CUDA-optimised graphs (com.microsoft.NhwcConv),
      // which onnxruntime's CPU build cannot load.
      export:
        "no CPU-ready published ONNX export: `optimum-cli export onnx --model stabilityai/sd-turbo DIR`, then `npm run models -- import sd-turbo DIR`",
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
    source: { kind: "files", files: [CLIP_MERGES], hub: hubExport("stable-diffusion-1-5", "stable-diffusion-v1-5/stable-diffusion-v1-5", "onnx", SD15_GRAPHS) },
    graphs: SD15_GRAPHS,
    generation: sizes(512),
    photographic: true,
    details: {
      family: "stable-diffusion",
      diffusion: { scheduler: "dpmpp-2m-karras", steps: 25, guidanceScale: 7.5 },
      export: "diffusers' ONNX export (revision `onnx`, float32; the UNet keeps its weights in unet/weights.pb, which needs the runtime to load by path)",
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
    graphs: OPTIMUM_FP32_GRAPHS,
    generation: sizes(768),
    photographic: true,
    details: {
      family: "stable-diffusion",
      diffusion: { scheduler: "dpmpp-2m-karras", steps: 25, guidanceScale: 7.5, padToken: "!" },
      export:
        "no published ONNX export: `optimum-cli export onnx --model stabilityai/stable-diffusion-2-1 DIR`, then `npm run models -- import stable-diffusion-2-1 DIR`",
    },
  },
];
