/**
 * The onnxruntime session options that differ between models: a catalog entry states its own where
 * they differ from {@link DEFAULT_SESSION_SETTINGS} (bench/session-options.ts measures every model
 * under each and says where the catalog's choice and the measurements disagree); a graph the catalog
 * does not know (a test's tiny model) gets the default.
 */
import type { CatalogEntry, SessionSettings } from "../../models/catalog/catalog-types.js";

export type { SessionSettings } from "../../models/catalog/catalog-types.js";

/**
 * Arena on, memory pattern off. The arena keeps a run's working memory for the next run, which every
 * graph here needs: without it each run allocates its activations anew and takes markedly longer.
 * Why the memory pattern is off is `reason`: a memory reason, so bench/session-options.ts counts it
 * for a model only while that model's row keeps less resident than the anchor's in the same run. A
 * model that differs (ISNet) says so in its catalog entry.
 */
export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  cpuArena: true,
  memoryPattern: false,
  reason:
    "memory: onnxruntime's default memory pattern plans one more block per input shape on top of what the arena keeps, " +
    "so a session keeps more resident after its runs (on the tiled upscalers and the style graphs alike), for runs no " +
    "faster beyond the spread of two identical sessions (bench/session-options.ts)",
};

export function sessionSettings(entry: CatalogEntry): SessionSettings {
  return entry.session ?? DEFAULT_SESSION_SETTINGS;
}

/** What of onnxruntime's session options {@link SessionSettings} decide, beside the service's own (serviceSessionOptions). */
interface BaseSessionOptions {
  intraOpNumThreads: number;
  graphOptimizationLevel: "disabled" | "basic" | "extended" | "all";
}

/**
 * The options a session of a model with `settings` is created with: the service's `base` options with
 * the model's arena, memory pattern, graph optimisation level and thread cap over them. The runtime
 * creates its sessions with these, and bench/session-options.ts measures the catalog's choice with them.
 */
export function sessionOptionsFor<Base extends BaseSessionOptions>(base: Base, settings: SessionSettings) {
  return {
    ...base,
    enableCpuMemArena: settings.cpuArena,
    enableMemPattern: settings.memoryPattern,
    graphOptimizationLevel: settings.graphOptimization ?? base.graphOptimizationLevel,
    intraOpNumThreads: Math.min(base.intraOpNumThreads, settings.maxThreads ?? Infinity),
  };
}
