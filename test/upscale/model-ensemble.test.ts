/** Model ensemble: the per-sample mean of several networks' outputs, and the ensembles the default runs. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import { modelEnsemble } from "../../workers/upscale/model-ensemble.js";
import { upscaleWithNetwork } from "../../workers/upscale/network-pipeline.js";
import { defaultModel, upscalePath } from "../../models/requests/upscale-choice.js";
import { upscaleByChoice } from "../../workers/upscale/upscale-service.js";
import { hasTestPhotos } from "../support/test-assets.js";
import { fileTempDir } from "../support/temp-dir.js";
import { mirrorHas, networkDependencies, photoCrop } from "./upscale-fixtures.js";

const grey = (...samples: number[]): RawImage => ({ data: Uint8Array.from(samples), width: samples.length, height: 1, channels: 1 });

describe("modelEnsemble", () => {
  it("averages each sample, rounding half up once", () => {
    expect(Array.from(modelEnsemble([grey(0, 10, 255, 7), grey(255, 20, 255, 8)]).data)).toEqual([128, 15, 255, 8]);
    expect(Array.from(modelEnsemble([grey(0, 3), grey(1, 3), grey(1, 4)]).data)).toEqual([1, 3]);
  });

  it("returns a single output unchanged", () => {
    expect(modelEnsemble([grey(1, 2, 3)])).toEqual(grey(1, 2, 3));
  });

  it("refuses outputs of different shapes, and none at all, as an internal error", () => {
    expect(() => modelEnsemble([grey(1, 2), grey(1, 2, 3)])).toThrow(AtelierError);
    expect(() => modelEnsemble([grey(1, 2), { ...grey(1, 2), width: 1, height: 2 }])).toThrow(/Expected model ensemble outputs of 2x1x1 but received 1x2x1/);
    expect(() => modelEnsemble([])).toThrow(AtelierError);
  });
});

describe.skipIf(!(hasTestPhotos() && mirrorHas("lsdir-compact-x4")))("the model ensembles the default chooses, with real networks", () => {
  const modelsDir = fileTempDir("test-models");
  let deps: Awaited<ReturnType<typeof networkDependencies>>;
  beforeAll(async () => {
    deps = await networkDependencies(modelsDir, ["lsdir-compact-x4"]);
  }, 180_000);
  afterAll(async () => {
    await deps?.runtime.dispose();
  });

  it.each([2, 4])("x%i: the mean of its two networks' outputs, different from each of them", async (scale) => {
    const lr = await photoCrop("chelsea.png", { left: 150, top: 60, width: 40, height: 32 });
    const choice = defaultModel(scale, lr, "lossy", (entry) => deps.models.isUsable(entry), loadConfig({}).images.upscaleTimeBudgetMs!);
    const { averagedWith } = choice;
    expect(averagedWith, "the default budget affords a model ensemble for a small input").toBeDefined();
    const ensembled = await upscaleByChoice(lr, choice, scale, deps, { grey: false });
    const first = await upscaleWithNetwork(lr, choice.entry, scale, upscalePath(choice.entry, scale)!, deps, { selfEnsemble: choice.selfEnsemble });
    const second = await upscaleWithNetwork(lr, averagedWith!.entry, scale, averagedWith!.path, deps, { selfEnsemble: averagedWith!.selfEnsemble });
    expect(ensembled.steps).toEqual([...first.steps, ...second.steps, "mean of both"]);
    expect(ensembled.image).toEqual(modelEnsemble([first.image, second.image]));
    expect(ensembled.image.data).not.toEqual(first.image.data);
    expect(ensembled.image.data).not.toEqual(second.image.data);
  });
});
