/**
 * Which upscaler runs for a request, and how it reaches the requested factor.
 *
 * A model produces only its native factors (ESRGAN x2, x3, x4, x8; LSDIR x4; ESPCN x3). Any other
 * factor is reached from the smallest native factor above it, followed by a Lanczos-3 reduction, else
 * from the largest native factor below it, followed by a Lanczos-3 enlargement: a network's output
 * reduced a little keeps its detail, while an enlargement afterwards is only as sharp as Lanczos. An
 * enlargement after the network is allowed up to {@link MAX_FINAL_ENLARGEMENT}; beyond it the network
 * adds little over Lanczos alone, so the catalog lists only the factors within it.
 *
 * Without an explicit model, the first installed model of {@link DEFAULT_PREFERENCE} for the factor
 * runs; the order comes from `bench/upscale-bench.ts` (quality on photographs first, among models fast
 * enough to finish the largest allowed output within the worker deadline). Images smaller than
 * {@link MIN_NETWORK_SIDE} on a side (icons, thumbnails) get Lanczos unless a model is named.
 */
import { AtelierError } from "../../core/errors.js";
import type { CatalogEntry } from "../catalog/catalog-types.js";
import { catalogEntry, entriesForTask } from "../catalog/model-catalog.js";

/** The classical model: no weights, always installed, the fallback when no network fits. */
export const CLASSICAL_MODEL = "lanczos";

/**
 * Default models per factor, best first; the first one installed runs. Quality decides, among models
 * within the speed bound: a default must finish the largest allowed output (16.8 MP by default) within
 * the default worker deadline (120 s) while the worker runs its default two jobs at once on two cores,
 * so at most 3.5 s per output megapixel measured alone, tiles included.
 *
 * From bench/upscale-bench.ts on six photographs (mean luma PSNR gain over a pixel-centred Lanczos-3,
 * x2 / x3 / x4 / x5 / x6 / x7 / x8), and speed on two otherwise idle cores:
 *
 * - esrgan-thick: -0.03 / +0.71 / +0.77 / +0.87 / +0.80 / +0.74 / +0.67 dB, better than Lanczos on
 *   every photo from x3 up; 20, 7.8 and 4.4 s per output MP at x2, x3 and x4, and through its x8
 *   network 1.5 s at x8, 2.6 s at x6 and 3.7 s at x5 (tiled, 1.5 to 2 MP outputs): the default at
 *   x6 to x8 only;
 * - lsdir-compact-x4: +1.15 / +0.70 / +0.26 / +0.23 / +0.18 / +0.17 / +0.14 dB, 0.5 s per MP at x4
 *   (2 s at x2, through x4), and the largest SSIM gain of the models within the bound from x2 to x5;
 * - espcn-x3: +0.49 / +0.28 / +0.22 / +0.24 / +0.25 dB (it reaches x6 at most, see the catalog); at
 *   x5 and x6 its PSNR gain equals LSDIR's but its SSIM gain is a third lower, so LSDIR stays first;
 * - esrgan-medium, esrgan-slim: -0.35 / +0.27 / 0.00 and -0.41 / +0.08 / -0.08 dB, at 0.3 to 2.3 s
 *   per MP. They were ranked against libvips' lanczos3 (half a pixel off; see resample.ts), the
 *   classical model then, which they beat by 0.6 to 2.1 dB at x2 to x4 and not from x5, so they are
 *   not listed there. The classical model is now the centred Lanczos-3, which they do not beat at x2
 *   (nor slim at x4).
 *
 * Every list ends with Lanczos, which is always installed.
 */
export const DEFAULT_PREFERENCE: Readonly<Record<number, readonly string[]>> = {
  2: ["lsdir-compact-x4", "espcn-x3", "esrgan-medium", "esrgan-slim", CLASSICAL_MODEL],
  3: ["lsdir-compact-x4", "espcn-x3", "esrgan-medium", "esrgan-slim", CLASSICAL_MODEL],
  4: ["lsdir-compact-x4", "espcn-x3", "esrgan-medium", "esrgan-slim", CLASSICAL_MODEL],
  5: ["lsdir-compact-x4", "espcn-x3", CLASSICAL_MODEL],
  6: ["esrgan-thick", "lsdir-compact-x4", "espcn-x3", CLASSICAL_MODEL],
  7: ["esrgan-thick", "lsdir-compact-x4", CLASSICAL_MODEL],
  8: ["esrgan-thick", "lsdir-compact-x4", CLASSICAL_MODEL],
};

/**
 * Without an explicit model, inputs narrower or shorter than this (in pixels) are upscaled with
 * Lanczos: they are icons and thumbnails rather than photographs, and loading a network for them costs
 * more than the whole resample.
 */
export const MIN_NETWORK_SIDE = 32;

/** Largest Lanczos enlargement allowed after a network (see the file header). */
export const MAX_FINAL_ENLARGEMENT = 2;

/** How a model reaches a factor. */
export interface UpscalePath {
  /** Factor the model produces in one pass. */
  nativeScale: number;
  /** Classical resample from `nativeScale` to the requested factor, if any. */
  finalResample: "none" | "reduce" | "enlarge";
}

/** The upscale models of the catalog, in catalog order. */
export function upscaleEntries(): CatalogEntry[] {
  return entriesForTask("upscale");
}

/** Whether the entry runs on code alone (Lanczos) rather than a network. */
export function isClassical(entry: CatalogEntry): boolean {
  return entry.source.kind === "builtin";
}

/**
 * The path `entry` takes to `scale`: its smallest native factor at or above `scale`, else its largest
 * below. Undefined when the model has no native factor or the catalog does not list `scale` for it.
 */
export function upscalePath(entry: CatalogEntry, scale: number): UpscalePath | undefined {
  const constraints = entry.upscale;
  if (!constraints || !constraints.supportedScales.includes(scale)) return undefined;
  const natives = [...constraints.nativeScales].sort((a, b) => a - b);
  const above = natives.find((native) => native >= scale);
  if (above !== undefined) return { nativeScale: above, finalResample: above === scale ? "none" : "reduce" };
  const below = natives[natives.length - 1];
  if (below === undefined || scale / below > MAX_FINAL_ENLARGEMENT) return undefined;
  return { nativeScale: below, finalResample: "enlarge" };
}

/**
 * The entry for an explicitly requested model id. Throws INVALID_INPUT for an id that is not an
 * upscale model, or one that cannot produce `scale`. Whether it is installed is the loader's check.
 */
export function requestedModel(id: string, scale: number): CatalogEntry {
  const entries = upscaleEntries();
  const entry = catalogEntry(id);
  if (!entry || entry.task !== "upscale") {
    const ids = entries.map((candidate) => candidate.id).join(", ");
    throw new AtelierError("INVALID_INPUT", `Unknown upscale model "${id}". Upscale models: ${ids}.`, {
      issues: [{ path: "model", message: `Expected one of ${ids} for model but received "${id}".` }],
    });
  }
  if (!upscalePath(entry, scale)) {
    const scales = entry.upscale?.supportedScales.join(", ") ?? "none";
    throw new AtelierError("INVALID_INPUT", `Expected one of ${scales} for scale with model "${id}" but received ${scale}.`, {
      issues: [{ path: "scale", message: `Model "${id}" produces scales ${scales}; received ${scale}.` }],
    });
  }
  return entry;
}

/**
 * The model a request without `model` gets: the first usable entry of the factor's preference list
 * that can produce it, or Lanczos for small inputs and when none is usable.
 */
export function defaultModel(scale: number, size: { width: number; height: number }, isUsable: (entry: CatalogEntry) => boolean): CatalogEntry {
  const classical = catalogEntry(CLASSICAL_MODEL)!;
  if (Math.min(size.width, size.height) < MIN_NETWORK_SIDE) return classical;
  for (const id of DEFAULT_PREFERENCE[scale] ?? []) {
    const entry = catalogEntry(id);
    if (entry && upscalePath(entry, scale) && isUsable(entry)) return entry;
  }
  return classical;
}
