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
import type { UpscaleQuality } from "../../core/upscale-quality.js";

/** Largest Lanczos enlargement allowed after a network (see the file header). */
export const MAX_FINAL_ENLARGEMENT = 2;

/** A network run once or as a self-ensemble. */
export interface NetworkRun {
  id: string;
  /** Run as a self-ensemble of eight orientations (self-ensemble.ts). */
  selfEnsemble: boolean;
  /**
   * Reach the factor through this larger native factor, reduced with Lanczos-3 afterwards, rather than
   * through {@link upscalePath}'s (ESRGAN thick's x2 network loses to Lanczos; its x4 one reduced wins).
   */
  viaNativeScale?: number;
}

/** The path `run` takes to `scale`: its {@link NetworkRun.viaNativeScale} when set and native, else {@link upscalePath}'s. */
export function runPath(entry: CatalogEntry, scale: number, viaNativeScale?: number): UpscalePath | undefined {
  if (viaNativeScale === undefined) return upscalePath(entry, scale);
  if (!entry.upscale?.nativeScales.includes(viaNativeScale) || viaNativeScale < scale) return undefined;
  return { nativeScale: viaNativeScale, finalResample: viaNativeScale === scale ? "none" : "reduce" };
}

/** A stronger, slower way to a factor, with its measured cost. */
export interface AffordableUpgrade extends NetworkRun {
  /**
   * A second network whose output is averaged with this one's (a model ensemble, model-ensemble.ts):
   * networks of different architectures err differently, so the mean of both beats either alone.
   */
  averagedWith?: NetworkRun;
  /**
   * Milliseconds per output megapixel on 2 cores, ensembles included, from the networks' measured
   * rates in the catalog (`measured.msPerOutputMegapixel`, bench/upscale-bench.ts speed); a model
   * ensemble costs the sum of its two networks' rates (the averaging itself is negligible: the quality
   * bench's x4 ensemble took the sum of thick's and LSDIR x8's times under the same load).
   */
  msPerOutputMegapixel: number;
}

/** A way as listed below, before its cost is read from the catalog. */
type Way = Omit<AffordableUpgrade, "msPerOutputMegapixel">;

/**
 * Milliseconds per output megapixel of `run` at `scale`: the catalog's measured rate at the native
 * factor it runs at, times the extra pixels that factor makes before the reduction to `scale`, eight
 * times over as a self-ensemble.
 */
function runCost(run: NetworkRun, scale: number): number {
  const entry = catalogEntry(run.id);
  const native = (entry && runPath(entry, scale, run.viaNativeScale))?.nativeScale;
  const rate = native === undefined ? undefined : entry?.measured?.msPerOutputMegapixel?.[native];
  if (native === undefined || rate === undefined) throw new Error(`The catalog has no measured rate for ${run.id} at x${scale}.`);
  return rate * (native / scale) ** 2 * (run.selfEnsemble ? 8 : 1);
}

function withCosts(ways: Readonly<Record<number, readonly Way[]>>): Readonly<Record<number, readonly AffordableUpgrade[]>> {
  return Object.fromEntries(
    Object.entries(ways).map(([factor, list]) => [
      factor,
      list.map((way) => ({ ...way, msPerOutputMegapixel: runCost(way, Number(factor)) + (way.averagedWith ? runCost(way.averagedWith, Number(factor)) : 0) })),
    ]),
  );
}

/**
 * How the source image was stored, which decides the ways worth their time: a lossy format leaves
 * compression artefacts (blocks, ringing) in the pixels, which a network fitted to clean reductions
 * sharpens as if they were detail, while one trained on compressed inputs removes them.
 */
export type SourceStorage = "lossy" | "lossless";

/**
 * Formats (as sharp's metadata names them) whose pixels are stored exactly. Every other one counts as
 * lossy: JPEG, and WebP and AVIF (libvips' "heif"), which are lossy in nearly every use and whose
 * metadata does not say when they are not.
 */
const LOSSLESS_FORMATS: ReadonlySet<string> = new Set(["png", "tiff", "gif", "bmp", "raw"]);

/** The storage of a source in `format` (sharp's metadata name, e.g. "png", "jpeg"). */
export function sourceStorage(format: string): SourceStorage {
  return LOSSLESS_FORMATS.has(format) ? "lossless" : "lossy";
}

/**
 * Stronger ways worth their time where it is affordable, per kind of source and factor, best first;
 * the first whose networks are installed and whose predicted time fits the budget runs. Each list is
 * ranked on the tuning photos of bench/bench-photos.ts (bench/upscale-bench.ts quality; the figures
 * are in docs/upscale-atelier-compact.md) with the inputs of its kind: clean ones for lossless
 * sources, JPEG-compressed ones (q75) for lossy sources. The ways whose mean RGB PSNR gain over
 * Lanczos-3 reaches +0.5 dB come first, the one whose worst photo loses least first; the others
 * follow by mean gain. A way that gains less than the fast default ({@link DEFAULT_PREFERENCE}) for
 * that kind, or costs more than an earlier way that can always run where it can, is not listed.
 * - Lossless: Atelier's own network as a self-ensemble, alone. Fitted to clean bicubic reductions, it
 *   gains most on clean inputs and loses least on the worst photo, more than any model ensemble with
 *   ESRGAN thick or LSDIR, at about half their cost. It ships with Atelier, so a slower way would never
 *   be reached, and no cheaper way gains more than the fast default (the same network run once).
 * - Lossy: the model ensembles with LSDIR as a self-ensemble come first where LSDIR is pulled (x2:
 *   averaged with ESRGAN thick's x4 network reduced to x2, then LSDIR ×8 alone; x4: ESRGAN thick
 *   averaged with LSDIR ×8). LSDIR C3 was trained for JPEG artefacts and leads every other way on
 *   compressed inputs. Where LSDIR is not pulled, ESRGAN thick averaged with Atelier's network as a
 *   self-ensemble, then (x4) ESRGAN thick alone, then Atelier's network as a self-ensemble: each beats
 *   the fast default on compressed inputs, but far less than the LSDIR ensembles.
 * Different architectures and training err differently, so a model ensemble's mean beats the better
 * of its two networks and lifts the worst photo; self-ensembles of ESRGAN thick gain too little to be
 * listed. ESRGAN thick's own x2 network loses to Lanczos, so x2 takes its x4 one, reduced. x3 is not
 * measured yet. The measured time per output megapixel predicts whether a request fits the time
 * budget (ATELIER_UPSCALE_TIME_BUDGET_MS); larger requests get the fast default.
 */
const WAYS: Readonly<Record<SourceStorage, Readonly<Record<number, readonly Way[]>>>> = {
  lossless: {
    2: [{ id: "atelier-compact-x2", selfEnsemble: true }],
    4: [{ id: "atelier-compact-x4", selfEnsemble: true }],
  },
  lossy: {
    2: [
      { id: "lsdir-compact-x4", selfEnsemble: true, averagedWith: { id: "esrgan-thick", selfEnsemble: false, viaNativeScale: 4 } },
      { id: "lsdir-compact-x4", selfEnsemble: true },
      { id: "atelier-compact-x2", selfEnsemble: true, averagedWith: { id: "esrgan-thick", selfEnsemble: false, viaNativeScale: 4 } },
      { id: "atelier-compact-x2", selfEnsemble: true },
    ],
    4: [
      { id: "esrgan-thick", selfEnsemble: false, averagedWith: { id: "lsdir-compact-x4", selfEnsemble: true } },
      { id: "esrgan-thick", selfEnsemble: false, averagedWith: { id: "atelier-compact-x4", selfEnsemble: true } },
      { id: "esrgan-thick", selfEnsemble: false },
      { id: "atelier-compact-x4", selfEnsemble: true },
    ],
  },
};

/** {@link WAYS} with their measured costs. */
export const AFFORDABLE_UPGRADES: Readonly<Record<SourceStorage, Readonly<Record<number, readonly AffordableUpgrade[]>>>> = {
  lossless: withCosts(WAYS.lossless),
  lossy: withCosts(WAYS.lossy),
};

/**
 * What `quality: "max"` runs per kind of source and factor: the way with the highest mean RGB PSNR
 * gain over Lanczos-3 on the tuning photos' inputs of that kind, worst photo aside. On the ways
 * measured that is the first of {@link AFFORDABLE_UPGRADES} for each (lossless: Atelier's network as
 * a self-ensemble; lossy: the LSDIR model ensembles). Factors not measured yet get the `balanced`
 * choice.
 */
export const STRONGEST_WAYS: Readonly<Record<SourceStorage, Readonly<Record<number, AffordableUpgrade>>>> = {
  lossless: { 2: AFFORDABLE_UPGRADES.lossless[2]![0]!, 4: AFFORDABLE_UPGRADES.lossless[4]![0]! },
  lossy: { 2: AFFORDABLE_UPGRADES.lossy[2]![0]!, 4: AFFORDABLE_UPGRADES.lossy[4]![0]! },
};

/** Predicted milliseconds for `upgrade` at `scale` on an input of `size`. */
export function predictedUpgradeMs(upgrade: AffordableUpgrade, scale: number, size: { width: number; height: number }): number {
  return ((size.width * scale * size.height * scale) / 1e6) * upgrade.msPerOutputMegapixel;
}

/** What a request without `model` runs. */
export interface UpscaleChoice {
  entry: CatalogEntry;
  /** Run the network as a self-ensemble of eight orientations. */
  selfEnsemble: boolean;
  /** A second network whose output is averaged with the first's (a model ensemble), and its path. */
  averagedWith?: { entry: CatalogEntry; selfEnsemble: boolean; path: UpscalePath };
}

/** The choice an upgrade makes, or undefined when one of its networks cannot run or reach `scale`. */
function upgradeChoice(upgrade: AffordableUpgrade, scale: number, isUsable: (entry: CatalogEntry) => boolean): UpscaleChoice | undefined {
  const entry = catalogEntry(upgrade.id);
  if (!entry || !upscalePath(entry, scale) || !isUsable(entry)) return undefined;
  const choice = { entry, selfEnsemble: upgrade.selfEnsemble };
  if (!upgrade.averagedWith) return choice;
  const partner = catalogEntry(upgrade.averagedWith.id);
  const path = partner && runPath(partner, scale, upgrade.averagedWith.viaNativeScale);
  if (!partner || !path || !isUsable(partner)) return undefined;
  return { ...choice, averagedWith: { entry: partner, selfEnsemble: upgrade.averagedWith.selfEnsemble, path } };
}

/** The classical model: no weights, always installed, the fallback when no network fits. */
export const CLASSICAL_MODEL = "lanczos";

/**
 * Default models per factor, best first (each catalog entry's `upscaleDefaultRank`); the first one
 * installed runs. Quality decides, among models
 * within the speed bound: a default must finish the largest allowed output (16.8 MP by default) within
 * the default worker deadline (120 s) while the worker runs its default two jobs at once on two cores,
 * so at most 3.5 s per output megapixel measured alone, tiles included.
 *
 * The figures behind the order (luma PSNR and SSIM gain over the pixel-centred Lanczos-3 on six
 * photographs, seconds per output megapixel) are printed by bench/upscale-bench.ts; the README's
 * Upscaling table keeps them. What they decide: LSDIR gains most from x2 to x5 and is fast; ESRGAN
 * thick is within the speed bound only through its x8 network, so it leads from x6 on; ESPCN matches
 * LSDIR's PSNR gain at x5 and x6 with a third less SSIM gain, so it comes after it; ESRGAN medium and
 * slim beat the off-centre libvips lanczos3 they were first ranked against at x2 to x4 only (not from
 * x5), and do not beat the centred Lanczos-3 at x2, so they come last, at x2 to x4.
 *
 * Atelier's own networks lead at x2 and x4: at LSDIR's cost they beat it on clean and on JPEG inputs,
 * tuning and reporting photos alike (docs/upscale-atelier-compact.md), and they ship with Atelier.
 * The other factors are not measured with them yet.
 *
 * Every list ends with Lanczos, which is always installed.
 */
export const DEFAULT_PREFERENCE: Readonly<Record<number, readonly string[]>> = defaultPreference();

/** {@link DEFAULT_PREFERENCE} from the catalog entries' `upscaleDefaultRank`, Lanczos last at every factor. */
function defaultPreference(): Record<number, string[]> {
  const ranked = entriesForTask("upscale").flatMap((entry) =>
    Object.entries(entry.upscaleDefaultRank ?? {}).map(([factor, rank]) => ({ factor: Number(factor), rank: rank!, id: entry.id })),
  );
  const factors = [...new Set(ranked.map(({ factor }) => factor))].sort((a, b) => a - b);
  return Object.fromEntries(
    factors.map((factor) => [
      factor,
      [...ranked.filter((place) => place.factor === factor).sort((a, b) => a.rank - b.rank).map(({ id }) => id), CLASSICAL_MODEL],
    ]),
  );
}

/**
 * Without an explicit model, inputs narrower or shorter than this (in pixels) are upscaled with
 * Lanczos: they are icons and thumbnails rather than photographs, and loading a network for them costs
 * more than the whole resample.
 */
export const MIN_NETWORK_SIDE = 32;

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
 * What a request without `model` gets: the first usable entry of {@link AFFORDABLE_UPGRADES} for the
 * source's storage whose predicted time fits `timeBudgetMs` (0: none), else the first usable entry of the factor's preference
 * list that can produce it, or Lanczos for small inputs and when none is usable.
 */
export function defaultModel(
  scale: number,
  size: { width: number; height: number },
  source: SourceStorage,
  isUsable: (entry: CatalogEntry) => boolean,
  timeBudgetMs: number,
): UpscaleChoice {
  const classical = { entry: catalogEntry(CLASSICAL_MODEL)!, selfEnsemble: false };
  if (Math.min(size.width, size.height) < MIN_NETWORK_SIDE) return classical;
  for (const upgrade of AFFORDABLE_UPGRADES[source][scale] ?? []) {
    const choice = upgradeChoice(upgrade, scale, isUsable);
    if (choice && predictedUpgradeMs(upgrade, scale, size) <= timeBudgetMs) return choice;
  }
  for (const id of DEFAULT_PREFERENCE[scale] ?? []) {
    const entry = catalogEntry(id);
    if (entry && upscalePath(entry, scale) && isUsable(entry)) return { entry, selfEnsemble: false };
  }
  return classical;
}

/** The networks of a way in words, e.g. "esrgan-thick averaged with lsdir-compact-x4 as a self-ensemble of 8". */
function describeRuns(way: AffordableUpgrade): string {
  const words = (run: NetworkRun) => `${run.id}${run.viaNativeScale ? ` x${run.viaNativeScale}` : ""}${run.selfEnsemble ? " as a self-ensemble of 8" : ""}`;
  return way.averagedWith ? `${words(way)} averaged with ${words(way.averagedWith)}` : words(way);
}

/**
 * Refuses a `max` way whose predicted time would not finish within the router's deadline with every
 * job slot of the worker busy (the slots share the cores, so each runs about `concurrency` times
 * slower): the call would only time out after holding a slot that long. With the defaults on 2 cores
 * (120 s, 2 slots) that is 60 s predicted alone: outputs up to about 3.5 MP at x2 and 14 MP at x4.
 */
export function assertWithinDeadline(
  way: AffordableUpgrade,
  scale: number,
  size: { width: number; height: number },
  workers: { deadlineMs: number; concurrency: number },
): void {
  const predictedMs = predictedUpgradeMs(way, scale, size);
  const allowedMs = workers.deadlineMs / Math.max(1, workers.concurrency);
  if (predictedMs <= allowedMs) return;
  const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
  const message =
    `quality "max" would take about ${seconds(predictedMs)} for a ${size.width * scale}x${size.height * scale} result ` +
    `(${describeRuns(way)}, ${(way.msPerOutputMegapixel / 1000).toFixed(1)} s per output MP on 2 cores), ` +
    `over the ${seconds(allowedMs)} an upscale may take here (worker deadline ${seconds(workers.deadlineMs)} shared by ${workers.concurrency} concurrent jobs). ` +
    'Use quality "balanced", a smaller image or a smaller scale.';
  throw new AtelierError("INVALID_INPUT", message, { issues: [{ path: "quality", message }] });
}

/**
 * What a request without `model` runs at `quality`: {@link defaultModel} with no budget (`fast`) or
 * the configured one (`balanced`), or the source's and factor's {@link STRONGEST_WAYS} entry (`max`), which must be
 * installed (MODEL_NOT_INSTALLED otherwise) and fit {@link assertWithinDeadline}.
 */
export function chooseByQuality(
  quality: UpscaleQuality,
  scale: number,
  size: { width: number; height: number },
  source: SourceStorage,
  models: { isUsable(entry: CatalogEntry): boolean; assertUsable(entry: CatalogEntry): void },
  settings: { timeBudgetMs: number; workers: { deadlineMs: number; concurrency: number } },
): UpscaleChoice {
  const isUsable = (entry: CatalogEntry) => models.isUsable(entry);
  const strongest = STRONGEST_WAYS[source][scale];
  if (quality === "fast") return defaultModel(scale, size, source, isUsable, 0);
  if (quality === "balanced" || !strongest) return defaultModel(scale, size, source, isUsable, settings.timeBudgetMs);
  for (const run of [strongest, ...(strongest.averagedWith ? [strongest.averagedWith] : [])]) models.assertUsable(catalogEntry(run.id)!);
  assertWithinDeadline(strongest, scale, size, settings.workers);
  return upgradeChoice(strongest, scale, isUsable)!;
}
