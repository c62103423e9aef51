/**
 * The declarative list of models this deployment knows. `GET /api/v1/models` and the gRPC
 * CatalogService are generated from it; each entry says how to tell whether it is installed.
 */
export type ModelTask = "generate" | "upscale" | "style-transfer" | "background-remove" | "prompt-improve";

export interface UpscaleConstraints {
  /** Factors the model produces in one pass. */
  nativeScales: number[];
  /** Factors accepted with this model (native ones, others reached by a final resample). */
  supportedScales: number[];
}

export interface GenerationConstraints {
  defaultWidth: number;
  defaultHeight: number;
  minSize: number;
  maxWidth: number;
  maxHeight: number;
  sizeMultiple: number;
}

export interface CatalogEntry {
  /** Stable lower-case hyphenated id; the value clients pass as `model` (or `style`). */
  id: string;
  task: ModelTask;
  name: string;
  description: string;
  /** SPDX id or short licence text. */
  license: string;
  nonCommercial: boolean;
  /** Credit the licence asks for, shown in `/models` and the README. */
  attribution?: string;
  /** Total weight size in bytes; 0 for models without weights. */
  sizeBytes: number;
  /** Command that installs the weights; absent for built-in models. */
  installCommand?: string;
  upscale?: UpscaleConstraints;
  generation?: GenerationConstraints;
  /** Generation models only: draws photographic scenes usable as replacement backgrounds. */
  photographic?: boolean;
  /** Extra facts for clients (presets, previews), serialised as JSON. */
  details?: Record<string, unknown>;
}

/** Every integer factor the upscale endpoint accepts. */
export const UPSCALE_SCALES = [2, 3, 4, 5, 6, 7, 8] as const;

export const MODEL_CATALOG: readonly CatalogEntry[] = [
  {
    id: "lanczos",
    task: "upscale",
    name: "Lanczos-3 resampling",
    description:
      "Classical windowed-sinc (Lanczos, a = 3) resampling. No model weights: sharp and predictable, " +
      "but it cannot invent detail. Used when no AI upscaler is installed or asked for.",
    license: "Apache-2.0 (libvips)",
    nonCommercial: false,
    sizeBytes: 0,
    upscale: { nativeScales: [...UPSCALE_SCALES], supportedScales: [...UPSCALE_SCALES] },
  },
];
