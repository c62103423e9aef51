/** Upscaling models: classical Lanczos, the UpscalerJS ESRGAN family, LSDIR compact, and Atelier's own compact networks. */
import type { CatalogEntry } from "../catalog-types.js";
import { pinnedFiles } from "../pinned-files.js";
import { integersOf, LIMITS } from "../../../core/limits.js";

/** Every integer factor the upscale endpoint accepts. */
export const UPSCALE_SCALES: readonly number[] = integersOf(LIMITS.upscaleScale);
const ALL_SCALES = [...UPSCALE_SCALES];

const ESRGAN_SCALES = [2, 3, 4, 8];

/** Licence and credit of Atelier's own compact networks: derivatives of 4xLSDIRCompactN3 (CC BY 4.0). */
const ATELIER_COMPACT_LICENSE = "CC-BY-4.0";
const ATELIER_COMPACT_ATTRIBUTION =
  "Derived from 4xLSDIRCompactN3 by Philip Hofmann (Phhofm), https://github.com/Phhofm/models, licensed CC BY 4.0 " +
  "(https://creativecommons.org/licenses/by/4.0/). Changed by Atelier: the last convolution refitted for clean, " +
  "bicubic-reduced photographs (training/, fit_head.py); the other layers are the original's. Shared under CC BY 4.0.";

/**
 * Milliseconds per output megapixel of LSDIR compact's x4 network on 2 cores (bench/upscale-bench.ts
 * speed); Atelier's own networks share its architecture and operators, so its rate.
 */
const SRVGG_COMPACT_X4_MS = 528;

/** Atelier's own SRVGG compact network at one native factor (training/README.md), committed with the code. */
function atelierCompact(scale: 2 | 4, name: string, description: string, upscaleDefaultRank: Partial<Record<number, number>>): CatalogEntry {
  const id = `atelier-compact-x${scale}`;
  return {
    id,
    task: "upscale",
    name,
    description,
    license: ATELIER_COMPACT_LICENSE,
    nonCommercial: false,
    attribution: ATELIER_COMPACT_ATTRIBUTION,
    homepage: "https://github.com/Phhofm/models",
    source: { kind: "bundled", files: pinnedFiles(id) },
    graphs: { [`x${scale}`]: { onnx: `${id}.onnx` } },
    signature: {
      inputs: [{ name: "input", dtype: "float32", shape: ["batch_size", 3, "height", "width"], layout: "NCHW", range: [0, 1] }],
      outputs: [{ name: "output", dtype: "float32", shape: ["batch_size", 3, `${scale}*height`, `${scale}*width`], layout: "NCHW", range: [0, 1] }],
    },
    imageFormat: { layout: "NCHW", channelOrder: "RGB", range: [0, 1] },
    // The same network as LSDIR compact, so the same tiles: about 150 MB of activations at 384 px.
    geometry: { tileSize: 384, tileOverlap: 16 },
    // At most a 2x Lanczos enlargement after the network (models/requests/upscale-choice.ts): x2 reaches up to x4.
    upscale: { nativeScales: [scale], supportedScales: UPSCALE_SCALES.filter((factor) => factor <= 2 * scale) },
    upscaleDefaultRank,
    // The x2 network runs the x4 one's body on the same input, so it costs what reaching x2 through x4 does.
    measured: { msPerOutputMegapixel: { [scale]: (SRVGG_COMPACT_X4_MS * 16) / (scale * scale) } },
  };
}

/** Value range of the UpscalerJS networks: RDN (slim, medium) works in 0-255, RRDN (thick) in 0-1. */
const ESRGAN_RANGE = { slim: [0, 255], medium: [0, 255], thick: [0, 1] } as const;

/**
 * Activation memory one tile leaves resident, bytes per output pixel by native factor: measured with
 * onnxruntime-node on CPU as the resident growth over the first run at a tile size (64 to 512 px, two
 * or three sizes for most graphs, which agreed within 10%); thick x3 is between its x2 and x4.
 */
const ESRGAN_TILE_BYTES = {
  slim: { 2: 420, 3: 360, 4: 330, 8: 940 },
  medium: { 2: 1550, 3: 680, 4: 430, 8: 990 },
  thick: { 2: 550, 3: 300, 4: 150, 8: 120 },
} as const;

function esrgan(
  size: "slim" | "medium" | "thick",
  name: string,
  description: string,
  ranking: Pick<CatalogEntry, "upscaleDefaultRank"> & { msPerOutputMegapixel?: Partial<Record<number, number>> },
): CatalogEntry {
  const range: [number, number] = [...ESRGAN_RANGE[size]];
  const id = `esrgan-${size}`;
  const pkg = `@upscalerjs/esrgan-${size}`;
  return {
    id,
    task: "upscale",
    name,
    description,
    license: "MIT",
    nonCommercial: false,
    attribution: "UpscalerJS ESRGAN models by Kevin Scott (MIT), trained on DIV2K.",
    homepage: "https://upscalerjs.com/models/available/upscaling/esrgan-" + size,
    source: { kind: "npm", package: pkg, optional: false, files: pinnedFiles(id) },
    graphs: Object.fromEntries(ESRGAN_SCALES.map((scale) => [`x${scale}`, { tfjsLayers: `x${scale}` }])),
    signature: {
      inputs: [{ name: "input", dtype: "float32", shape: ["batch", 3, "height", "width"], layout: "NCHW", range }],
      outputs: [{ name: "output", dtype: "float32", shape: ["batch", 3, "height*scale", "width*scale"], layout: "NCHW", range }],
    },
    imageFormat: { layout: "NCHW", channelOrder: "RGB", range },
    // Larger tiles waste less on overlaps; at 192 px one x2 to x4 tile keeps 60 to 250 MB of activations
    // (x8 tiles are shrunk further by the upscale worker).
    geometry: { tileSize: 192, tileOverlap: 12 },
    upscale: { nativeScales: ESRGAN_SCALES, supportedScales: ALL_SCALES },
    upscaleDefaultRank: ranking.upscaleDefaultRank,
    measured: {
      tileBytesPerOutputPixel: { ...ESRGAN_TILE_BYTES[size] },
      ...(ranking.msPerOutputMegapixel ? { msPerOutputMegapixel: ranking.msPerOutputMegapixel } : {}),
    },
  };
}

export const UPSCALE_MODELS: CatalogEntry[] = [
  {
    id: "lanczos",
    task: "upscale",
    name: "Lanczos-3 resampling",
    description:
      "Classical windowed-sinc (Lanczos, a = 3) resampling. No model weights: sharp and predictable, " +
      "but it cannot invent detail. Used when no AI upscaler is installed or asked for.",
    license: "MIT (Atelier's own pixel-centred resampler, workers/upscale/resample.ts)",
    nonCommercial: false,
    source: { kind: "builtin" },
    graphs: {},
    upscale: { nativeScales: ALL_SCALES, supportedScales: ALL_SCALES },
  },
  esrgan(
    "thick",
    "ESRGAN thick (UpscalerJS)",
    "Residual-in-residual dense network (RRDN, 10 blocks) trained on DIV2K: the most detailed of the three ESRGAN sizes, and the slowest. Native 2x, 3x, 4x and 8x.",
    // Within the default's speed bound only through its x8 network, so it leads from x6 on.
    { upscaleDefaultRank: { 6: 1, 7: 1, 8: 1 }, msPerOutputMegapixel: { 4: 4703 } },
  ),
  esrgan(
    "medium",
    "ESRGAN medium (UpscalerJS)",
    "Residual dense network (RDN) of medium depth trained on DIV2K: a balance of detail and speed. Native 2x, 3x, 4x and 8x.",
    { upscaleDefaultRank: { 2: 4, 3: 3, 4: 4 } },
  ),
  esrgan(
    "slim",
    "ESRGAN slim (UpscalerJS)",
    "Small residual dense network (RDN) trained on DIV2K: fast, modest gains over classical resampling. Native 2x, 3x, 4x and 8x.",
    { upscaleDefaultRank: { 2: 5, 3: 4, 4: 5 } },
  ),
  {
    id: "lsdir-compact-x4",
    task: "upscale",
    name: "4x LSDIR Compact C3",
    description:
      "Real-ESRGAN compact network (SRVGGNetCompact) by Philip Hofmann, trained on the LSDIR photo dataset to upscale " +
      "JPEG-compressed photographs (quality 30-100). Native 4x; fast for its quality.",
    license: "CC-BY-4.0",
    nonCommercial: false,
    attribution:
      "4xLSDIRCompactC3 by Philip Hofmann (Phhofm), https://github.com/Phhofm/models, licensed CC BY 4.0 " +
      "(https://creativecommons.org/licenses/by/4.0/); weights used unmodified.",
    homepage: "https://github.com/Phhofm/models",
    source: { kind: "files", files: pinnedFiles("lsdir-compact-x4") },
    graphs: { x4: { onnx: "4xLSDIRCompactC3_fp32.onnx" } },
    signature: {
      inputs: [{ name: "input", dtype: "float32", shape: ["batch_size", 3, "height", "width"], layout: "NCHW", range: [0, 1] }],
      outputs: [{ name: "output", dtype: "float32", shape: ["batch_size", 3, "4*height", "4*width"], layout: "NCHW", range: [0, 1] }],
    },
    imageFormat: { layout: "NCHW", channelOrder: "RGB", range: [0, 1] },
    // One 384 px tile keeps about 150 MB of activations; most photos need few tiles.
    geometry: { tileSize: 384, tileOverlap: 16 },
    upscale: { nativeScales: [4], supportedScales: ALL_SCALES },
    upscaleDefaultRank: { 2: 2, 3: 1, 4: 2, 5: 1, 6: 2, 7: 2, 8: 2 },
    measured: { tileBytesPerOutputPixel: { 4: 72 }, msPerOutputMegapixel: { 4: SRVGG_COMPACT_X4_MS } },
  },
  atelierCompact(
    4,
    "Atelier compact 4x",
    "Atelier's own 4x network for clean photographs: the SRVGG compact network of 4xLSDIRCompactN3 with its last layer " +
      "refitted to bicubic-reduced photos (least squares on 23 freely licensed photographs). LSDIR compact's speed.",
    { 4: 1 },
  ),
  atelierCompact(
    2,
    "Atelier compact 2x",
    "Atelier's own 2x network for clean photographs: the body of Atelier compact 4x with a 2x head fitted to " +
      "bicubic-reduced photos. About the work of reaching 2x through the 4x network, without its reduction.",
    { 2: 1 },
  ),
  {
    id: "espcn-x3",
    task: "upscale",
    name: "ESPCN 3x (luma)",
    description:
      "Efficient sub-pixel CNN (Shi et al. 2016) upscaling the luma channel 3x, chroma resampled classically. Tiny and fast; " +
      "small gains over bicubic. Fixed 224x224 input, so images are processed in tiles.",
    license: "MIT",
    nonCommercial: false,
    attribution: "ESPCN weights by Nagaraj S Murthy (niazwazir/SUB_PIXEL_CNN), MIT.",
    source: { kind: "files", files: pinnedFiles("espcn-x3") },
    graphs: { x3: { onnx: "super_resolution.onnx" } },
    signature: {
      inputs: [{ name: "input", dtype: "float32", shape: ["batch_size", 1, 224, 224], layout: "NCHW", range: [0, 1] }],
      outputs: [{ name: "output", dtype: "float32", shape: ["batch_size", 1, 672, 672], layout: "NCHW", range: [0, 1] }],
    },
    imageFormat: { layout: "NCHW", channelOrder: "Y", range: [0, 1] },
    geometry: { fixedSize: [224, 224], tileSize: 224, tileOverlap: 16 },
    // A final Lanczos enlargement over 2x leaves little of the network's gain (bench/upscale-bench.ts:
    // +0.16 dB at x7, +0.10 dB at x8, on half the photos), so 3x reaches up to 6x only.
    upscale: { nativeScales: [3], supportedScales: [2, 3, 4, 5, 6] },
    upscaleDefaultRank: { 2: 3, 3: 2, 4: 3, 5: 2, 6: 3 },
    measured: { tileBytesPerOutputPixel: { 3: 70 } },
  },
];
