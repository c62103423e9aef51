/** Model choice and the path to a factor: native, reduced from a larger native factor, or enlarged. */
import { describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { loadConfig } from "../../core/config.js";
import {
  AFFORDABLE_UPGRADES,
  CLASSICAL_MODEL,
  DEFAULT_PREFERENCE,
  MIN_NETWORK_SIDE,
  STRONGEST_WAYS,
  chooseByQuality,
  defaultModel,
  predictedUpgradeMs,
  requestedModel,
  runPath,
  sourceStorage,
  upscaleEntries,
  upscalePath,
} from "../../models/requests/upscale-choice.js";

const entry = (id: string) => catalogEntry(id)!;
const photo = { width: 640, height: 480 };
const installed = (...ids: string[]) => (candidate: CatalogEntry) => candidate.source.kind === "builtin" || ids.includes(candidate.id);

function failure(run: () => unknown): AtelierError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AtelierError);
    return error as AtelierError;
  }
  throw new Error("expected a failure");
}

describe("upscalePath", () => {
  it.each([
    ["lanczos", 7, 7, "none"],
    ["esrgan-slim", 2, 2, "none"],
    ["esrgan-slim", 3, 3, "none"],
    ["esrgan-slim", 5, 8, "reduce"],
    ["esrgan-slim", 6, 8, "reduce"],
    ["esrgan-thick", 7, 8, "reduce"],
    ["lsdir-compact-x4", 2, 4, "reduce"],
    ["lsdir-compact-x4", 3, 4, "reduce"],
    ["lsdir-compact-x4", 4, 4, "none"],
    ["lsdir-compact-x4", 6, 4, "enlarge"],
    ["lsdir-compact-x4", 8, 4, "enlarge"],
    ["espcn-x3", 2, 3, "reduce"],
    ["espcn-x3", 6, 3, "enlarge"],
  ] as const)("%s x%i runs natively at x%i (%s)", (id, scale, nativeScale, finalResample) => {
    expect(upscalePath(entry(id), scale)).toEqual({ nativeScale, finalResample });
  });

  it("has no path for a factor the catalog does not list for the model", () => {
    expect(upscalePath(entry("espcn-x3"), 7)).toBeUndefined();
    expect(upscalePath(entry("espcn-x3"), 8)).toBeUndefined();
  });

  it("gives every upscale model a path to every factor it lists, never enlarging more than 2x after the network", () => {
    for (const candidate of upscaleEntries()) {
      for (const scale of candidate.upscale!.supportedScales) {
        const path = upscalePath(candidate, scale);
        expect(path, `${candidate.id} x${scale}`).toBeDefined();
        expect(candidate.upscale!.nativeScales).toContain(path!.nativeScale);
        expect(scale / path!.nativeScale, `${candidate.id} x${scale}`).toBeLessThanOrEqual(2);
      }
    }
  });
});

describe("defaultModel", () => {
  it.each([
    [2, "atelier-compact-x2"],
    [3, "lsdir-compact-x4"],
    [4, "atelier-compact-x4"],
    [5, "lsdir-compact-x4"],
    [6, "esrgan-thick"],
    [7, "esrgan-thick"],
    [8, "esrgan-thick"],
  ])("x%i: %s when everything is installed (the head of the preference list), whatever the source's storage", (scale, id) => {
    for (const source of ["lossy", "lossless"] as const) expect(defaultModel(scale, photo, source, () => true, 0).entry.id, source).toBe(id);
    expect(DEFAULT_PREFERENCE[scale]![0]).toBe(id);
  });

  it("falls back along the list to what is installed", () => {
    expect(defaultModel(2, photo, "lossy", installed("espcn-x3"), 0).entry.id).toBe("espcn-x3");
    expect(defaultModel(6, photo, "lossy", installed("lsdir-compact-x4", "espcn-x3"), 0).entry.id).toBe("lsdir-compact-x4");
    expect(defaultModel(4, photo, "lossy", installed("esrgan-slim", "esrgan-medium", "esrgan-thick"), 0).entry.id).toBe("esrgan-medium");
    expect(defaultModel(3, photo, "lossy", installed("esrgan-slim"), 0).entry.id).toBe("esrgan-slim");
  });

  it("keeps to the speed bound and to models that beat the classical model", () => {
    const npmOnly = installed("esrgan-slim", "esrgan-medium", "esrgan-thick");
    // Thick: 4.4 to 20 s per output MP at x2 to x4, 3.7 s at x5 through its x8 network.
    for (const scale of [2, 3, 4, 5]) expect(defaultModel(scale, photo, "lossy", npmOnly, 0).entry.id, `x${scale}`).not.toBe("esrgan-thick");
    for (const scale of [6, 7, 8]) expect(defaultModel(scale, photo, "lossy", npmOnly, 0).entry.id, `x${scale}`).toBe("esrgan-thick");
    // Medium before slim up to x4; both fall below Lanczos from x5.
    expect(defaultModel(2, photo, "lossy", npmOnly, 0).entry.id).toBe("esrgan-medium");
    expect(defaultModel(2, photo, "lossy", installed("esrgan-slim"), 0).entry.id).toBe("esrgan-slim");
    expect(defaultModel(5, photo, "lossy", npmOnly, 0).entry.id).toBe(CLASSICAL_MODEL);
    expect(defaultModel(7, photo, "lossy", installed("espcn-x3"), 0).entry.id).toBe(CLASSICAL_MODEL);
    expect(defaultModel(6, photo, "lossy", installed("espcn-x3"), 0).entry.id).toBe("espcn-x3");
  });

  it("is Lanczos when nothing else is installed, and for icons and thumbnails", () => {
    expect(defaultModel(2, photo, "lossy", installed(), 0).entry.id).toBe(CLASSICAL_MODEL);
    expect(defaultModel(2, { width: MIN_NETWORK_SIDE - 1, height: 500 }, "lossy", () => true, 0).entry.id).toBe(CLASSICAL_MODEL);
    expect(defaultModel(2, { width: 500, height: MIN_NETWORK_SIDE - 1 }, "lossy", () => true, 0).entry.id).toBe(CLASSICAL_MODEL);
    expect(defaultModel(2, { width: MIN_NETWORK_SIDE, height: MIN_NETWORK_SIDE }, "lossy", () => true, 0).entry.id).toBe("atelier-compact-x2");
  });

  it("lists only upscale models that exist, each list ending with Lanczos", () => {
    for (const list of Object.values(DEFAULT_PREFERENCE)) {
      expect(list[list.length - 1]).toBe(CLASSICAL_MODEL);
      for (const id of list) expect(catalogEntry(id)?.task, id).toBe("upscale");
    }
  });
});

describe("requestedModel", () => {
  it("returns the entry for an upscale model and a factor it can reach", () => {
    expect(requestedModel("esrgan-slim", 6).id).toBe("esrgan-slim");
  });

  it.each(["no-such-model", "udnie"])("refuses %s with INVALID_INPUT listing the upscale models", (id) => {
    const error = failure(() => requestedModel(id, 2));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.httpStatus).toBe(400);
    expect(error.message).toBe(
      `Unknown upscale model "${id}". Upscale models: lanczos, esrgan-thick, esrgan-medium, esrgan-slim, lsdir-compact-x4, atelier-compact-x4, atelier-compact-x2, espcn-x3.`,
    );
    expect(error.issues).toEqual([{ path: "model", message: expect.stringContaining(`but received "${id}"`) }]);
  });

  it("refuses a factor the model cannot produce with INVALID_INPUT naming its factors", () => {
    const error = failure(() => requestedModel("espcn-x3", 8));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toBe('Expected one of 2, 3, 4, 5, 6 for scale with model "espcn-x3" but received 8.');
    expect(error.issues?.[0]?.path).toBe("scale");
  });
});

/** The model ensembles leading AFFORDABLE_UPGRADES for lossy sources: LSDIR x8-ensemble with ESRGAN thick's x4 network at x2, ESRGAN thick with LSDIR x8-ensemble at x4. */
const x2Ensemble = {
  entry: entry("lsdir-compact-x4"),
  selfEnsemble: true,
  averagedWith: { entry: entry("esrgan-thick"), selfEnsemble: false, path: { nativeScale: 4, finalResample: "reduce" } },
};
const x4Ensemble = {
  entry: entry("esrgan-thick"),
  selfEnsemble: false,
  averagedWith: { entry: entry("lsdir-compact-x4"), selfEnsemble: true, path: { nativeScale: 4, finalResample: "none" } },
};
/** What leads them for lossless sources: Atelier's own network as a self-ensemble. */
const x2Atelier8 = { entry: entry("atelier-compact-x2"), selfEnsemble: true };
const x4Atelier8 = { entry: entry("atelier-compact-x4"), selfEnsemble: true };

describe("runPath", () => {
  it("goes through the named larger native factor and reduces, else takes upscalePath's way", () => {
    expect(runPath(entry("esrgan-thick"), 2, 4)).toEqual({ nativeScale: 4, finalResample: "reduce" });
    expect(runPath(entry("esrgan-thick"), 2)).toEqual(upscalePath(entry("esrgan-thick"), 2));
    expect(runPath(entry("lsdir-compact-x4"), 2, 3)).toBeUndefined();
    expect(runPath(entry("esrgan-thick"), 4, 2)).toBeUndefined();
  });
});

describe("the storage of the source", () => {
  it.each([
    ["png", "lossless"],
    ["tiff", "lossless"],
    ["gif", "lossless"],
    ["bmp", "lossless"],
    ["raw", "lossless"],
    ["jpeg", "lossy"],
    ["webp", "lossy"],
    ["heif", "lossy"],
  ] as const)("%s is %s", (format, storage) => {
    expect(sourceStorage(format)).toBe(storage);
  });
});

describe("the strongest way the time budget affords", () => {
  const everything = () => true;
  const small = { width: 256, height: 256 };
  const medium = { width: 320, height: 320 };
  const budget = loadConfig({}).images.upscaleTimeBudgetMs!;
  const upgrade = (scale: number) => AFFORDABLE_UPGRADES.lossy[scale]![0]!;

  it("predicts time from output megapixels and the measured rate", () => {
    expect(predictedUpgradeMs(upgrade(4), 4, small)).toBeCloseTo((1024 * 1024 * upgrade(4).msPerOutputMegapixel) / 1e6, 6);
    expect(predictedUpgradeMs(upgrade(2), 2, small)).toBeCloseTo((512 * 512 * upgrade(2).msPerOutputMegapixel) / 1e6, 6);
  });

  it("gives a small lossy source a model ensemble, a medium one a single network's upgrade, a large one the fast default", () => {
    expect(defaultModel(2, small, "lossy", everything, budget)).toEqual(x2Ensemble);
    expect(defaultModel(4, small, "lossy", everything, budget)).toEqual(x4Ensemble);
    // 320x320 is 0.41 MP out at x2 and 1.6 MP at x4: over the budget for the ensembles, within it for one network.
    expect(defaultModel(2, medium, "lossy", everything, budget)).toEqual({ entry: entry("lsdir-compact-x4"), selfEnsemble: true });
    expect(defaultModel(4, medium, "lossy", everything, budget)).toEqual({ entry: entry("esrgan-thick"), selfEnsemble: false });
    // 640x480 is 1.2 MP out at x2 and 4.9 MP at x4: both predicted over the default budget.
    expect(defaultModel(2, photo, "lossy", everything, budget)).toEqual({ entry: entry("atelier-compact-x2"), selfEnsemble: false });
    expect(defaultModel(4, photo, "lossy", everything, budget)).toEqual({ entry: entry("atelier-compact-x4"), selfEnsemble: false });
  });

  it("gives a lossless source Atelier's own network as a self-ensemble where it fits, with everything installed, else the fast default", () => {
    for (const size of [small, medium]) {
      expect(defaultModel(2, size, "lossless", everything, budget)).toEqual(x2Atelier8);
      expect(defaultModel(4, size, "lossless", everything, budget)).toEqual(x4Atelier8);
    }
    expect(defaultModel(2, photo, "lossless", everything, budget)).toEqual({ entry: entry("atelier-compact-x2"), selfEnsemble: false });
    expect(defaultModel(4, photo, "lossless", everything, budget)).toEqual({ entry: entry("atelier-compact-x4"), selfEnsemble: false });
  });

  it("chooses differently for the same picture stored lossily and losslessly, and alike without a budget", () => {
    for (const scale of [2, 4]) {
      const lossy = defaultModel(scale, small, "lossy", everything, budget);
      const lossless = defaultModel(scale, small, "lossless", everything, budget);
      expect(lossless, `x${scale}`).not.toEqual(lossy);
      expect(defaultModel(scale, small, "lossless", everything, 0), `x${scale}`).toEqual(defaultModel(scale, small, "lossy", everything, 0));
    }
  });

  it.each([
    [2, "lossy"],
    [4, "lossy"],
    [2, "lossless"],
    [4, "lossless"],
  ] as const)("x%i, %s: takes each upgrade just within the budget and the next way just over it", (scale, source) => {
    const upgrades = AFFORDABLE_UPGRADES[source][scale]!;
    upgrades.forEach((way, i) => {
      // A way at an earlier way's rate is the fallback when that one's partner is not installed (tested below).
      if (upgrades.slice(0, i).some((earlier) => earlier.msPerOutputMegapixel === way.msPerOutputMegapixel)) return;
      const within = Math.floor(predictedUpgradeMs(way, scale, small));
      const taken = defaultModel(scale, small, source, everything, within + 1);
      expect(taken.entry.id).toBe(way.id);
      expect(taken.selfEnsemble).toBe(way.selfEnsemble);
      expect(taken.averagedWith?.entry.id).toBe(way.averagedWith?.id);
      // The next way that fits: one at the same rate (a fallback for another partner) does not.
      const next = upgrades.slice(i + 1).find((candidate) => predictedUpgradeMs(candidate, scale, small) <= within - 1);
      const over = defaultModel(scale, small, source, everything, within - 1);
      if (next) expect([over.entry.id, over.averagedWith?.entry.id]).toEqual([next.id, next.averagedWith?.id]);
      else expect(over).toEqual({ entry: entry(DEFAULT_PREFERENCE[scale]![0]!), selfEnsemble: false });
    });
  });

  it("keeps the fast default where no upgrade is listed, without a budget, or when the upgrade is not installed", () => {
    expect(defaultModel(3, small, "lossy", everything, budget)).toEqual({ entry: entry("lsdir-compact-x4"), selfEnsemble: false });
    expect(defaultModel(3, small, "lossless", everything, budget)).toEqual({ entry: entry("lsdir-compact-x4"), selfEnsemble: false });
    expect(defaultModel(4, small, "lossy", everything, 0).entry.id).toBe("atelier-compact-x4");
    expect(defaultModel(2, small, "lossy", everything, 0).selfEnsemble).toBe(false);
    expect(defaultModel(4, small, "lossy", installed("lsdir-compact-x4", "esrgan-medium"), budget).entry.id).toBe("lsdir-compact-x4");
    expect(defaultModel(2, small, "lossy", installed("esrgan-medium"), budget)).toEqual({ entry: entry("esrgan-medium"), selfEnsemble: false });
    // For lossless sources no LSDIR or ESRGAN way stands in for Atelier's own network.
    expect(defaultModel(4, small, "lossless", installed("lsdir-compact-x4", "esrgan-thick"), budget)).toEqual({ entry: entry("lsdir-compact-x4"), selfEnsemble: false });
    expect(defaultModel(4, { width: MIN_NETWORK_SIDE - 1, height: 64 }, "lossy", everything, budget).entry.id).toBe(CLASSICAL_MODEL);
    expect(defaultModel(4, { width: MIN_NETWORK_SIDE - 1, height: 64 }, "lossless", everything, budget).entry.id).toBe(CLASSICAL_MODEL);
  });

  it("skips a model ensemble one of whose networks is not installed", () => {
    expect(defaultModel(2, small, "lossy", installed("lsdir-compact-x4"), budget)).toEqual({ entry: entry("lsdir-compact-x4"), selfEnsemble: true });
    expect(defaultModel(4, small, "lossy", installed("esrgan-thick"), budget)).toEqual({ entry: entry("esrgan-thick"), selfEnsemble: false });
    // Without LSDIR, thick is averaged with Atelier's own networks, which ship with Atelier.
    expect(defaultModel(2, small, "lossy", installed("esrgan-thick", "atelier-compact-x2"), budget)).toEqual({
      entry: entry("atelier-compact-x2"),
      selfEnsemble: true,
      averagedWith: { entry: entry("esrgan-thick"), selfEnsemble: false, path: { nativeScale: 4, finalResample: "reduce" } },
    });
    expect(defaultModel(2, medium, "lossy", installed("esrgan-thick", "atelier-compact-x2"), budget)).toEqual(x2Atelier8);
    expect(defaultModel(4, small, "lossy", installed("esrgan-thick", "atelier-compact-x4"), budget)).toEqual({
      entry: entry("esrgan-thick"),
      selfEnsemble: false,
      averagedWith: { entry: entry("atelier-compact-x4"), selfEnsemble: true, path: { nativeScale: 4, finalResample: "none" } },
    });
  });

  it("lists only upscale models that can reach the factor, with a positive rate", () => {
    for (const [source, byFactor] of Object.entries(AFFORDABLE_UPGRADES)) {
      for (const [scale, upgrades] of Object.entries(byFactor)) {
        for (const { id, msPerOutputMegapixel, averagedWith } of upgrades) {
          expect(upscalePath(entry(id), Number(scale)), `${source}: ${id} x${scale}`).toBeDefined();
          if (averagedWith) expect(runPath(entry(averagedWith.id), Number(scale), averagedWith.viaNativeScale), `${source}: ${averagedWith.id} x${scale}`).toBeDefined();
          expect(msPerOutputMegapixel).toBeGreaterThan(0);
        }
      }
    }
  });

  it("reads the budget from ATELIER_UPSCALE_TIME_BUDGET_MS (default 10000 ms)", () => {
    expect(budget).toBe(10_000);
    expect(loadConfig({ ATELIER_UPSCALE_TIME_BUDGET_MS: "0" }).images.upscaleTimeBudgetMs).toBe(0);
    expect(() => loadConfig({ ATELIER_UPSCALE_TIME_BUDGET_MS: "-5" })).toThrow();
  });
});

describe("the quality a request asks for", () => {
  const everything = { isUsable: () => true, assertUsable: () => undefined };
  const defaults = loadConfig({});
  const settings = { timeBudgetMs: defaults.images.upscaleTimeBudgetMs!, workers: defaults.workers };
  const small = { width: 256, height: 256 };

  it("fast ignores the budget, balanced uses it, max takes the strongest way for the source's storage whatever the budget", () => {
    for (const source of ["lossy", "lossless"] as const) {
      expect(chooseByQuality("fast", 2, small, source, everything, settings)).toEqual({ entry: entry("atelier-compact-x2"), selfEnsemble: false });
    }
    expect(chooseByQuality("balanced", 2, small, "lossy", everything, settings)).toEqual(x2Ensemble);
    expect(chooseByQuality("balanced", 2, small, "lossless", everything, settings)).toEqual(x2Atelier8);
    expect(chooseByQuality("max", 2, photo, "lossy", everything, { ...settings, timeBudgetMs: 0 })).toEqual(x2Ensemble);
    expect(chooseByQuality("max", 4, photo, "lossy", everything, settings)).toEqual(x4Ensemble);
    expect(chooseByQuality("max", 2, photo, "lossless", everything, { ...settings, timeBudgetMs: 0 })).toEqual(x2Atelier8);
    expect(chooseByQuality("max", 4, photo, "lossless", everything, settings)).toEqual(x4Atelier8);
    // No strongest way measured at x3: the balanced choice.
    expect(chooseByQuality("max", 3, small, "lossy", everything, settings)).toEqual(defaultModel(3, small, "lossy", () => true, settings.timeBudgetMs));
  });

  it("max runs the first affordable upgrade of each storage and factor, the strongest on the ways measured", () => {
    for (const source of ["lossy", "lossless"] as const) {
      for (const scale of [2, 4]) expect(STRONGEST_WAYS[source][scale], `${source} x${scale}`).toBe(AFFORDABLE_UPGRADES[source][scale]![0]);
    }
  });

  it("max refuses a result predicted past the deadline shared by the job slots, and one whose model is not installed", () => {
    // Default 120 s over the default slots (2 on 2 cores: 60 s, 1.68 MP out at x2).
    const allowedMegapixels = defaults.workers.deadlineMs / defaults.workers.concurrency / STRONGEST_WAYS.lossy[2]!.msPerOutputMegapixel;
    const side = (megapixels: number) => Math.floor(Math.sqrt(megapixels * 1e6) / 2);
    expect(chooseByQuality("max", 2, { width: side(allowedMegapixels * 0.98), height: side(allowedMegapixels * 0.98) }, "lossy", everything, settings)).toEqual(x2Ensemble);
    const tooSlow = failure(() => chooseByQuality("max", 2, { width: side(allowedMegapixels * 1.02), height: side(allowedMegapixels * 1.02) }, "lossy", everything, settings));
    expect(tooSlow.code).toBe("INVALID_INPUT");
    expect(tooSlow.issues?.[0]?.path).toBe("quality");
    const allowedSeconds = Math.round(defaults.workers.deadlineMs / defaults.workers.concurrency / 1000);
    expect(tooSlow.message).toContain(`over the ${allowedSeconds} s an upscale may take here (worker deadline 120 s shared by ${defaults.workers.concurrency} concurrent jobs)`);
    // The lossless way is cheaper, so the same size is allowed for a lossless source.
    expect(chooseByQuality("max", 2, { width: side(allowedMegapixels * 1.02), height: side(allowedMegapixels * 1.02) }, "lossless", everything, settings)).toEqual(x2Atelier8);
    const missing = new AtelierError("MODEL_NOT_INSTALLED", "not installed");
    const none = { isUsable: () => false, assertUsable: () => { throw missing; } };
    expect(failure(() => chooseByQuality("max", 4, small, "lossy", none, settings))).toBe(missing);
    expect(failure(() => chooseByQuality("max", 4, small, "lossless", none, settings))).toBe(missing);
  });
});
