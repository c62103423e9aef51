/** The seeded random source and the doodle generator's inputs and outputs with the real model. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { createDoodleGenerator, doodleFeeds } from "../../workers/generation/doodle/doodle-generator.js";
import { DOODLE_STYLE, renderDoodle } from "../../workers/generation/doodle/render-doodle.js";
import type { GenerationParams, ImageGenerator } from "../../workers/generation/image-generator.js";
import { MAX_SEED, seededRandom } from "../../core/seeded-random.js";
import type { WorkerContext } from "../../workers/worker-context.js";
import { createWorkerContext } from "../../workers/worker-server.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { blockiness, greyLevels, nearestNeighbourDrawing } from "./drawing-measures.js";

const modelsFolder = fileTempDir("test-models");

describe("seededRandom", () => {
  it("repeats its sequence for a seed and differs between neighbouring seeds", () => {
    const draw = (seed: number) => Array.from({ length: 16 }, seededRandom(seed).uniform);
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    expect(draw(0)).not.toEqual(draw(1));
  });

  it("draws uniformly in [0, 1)", () => {
    const random = seededRandom(MAX_SEED);
    const values = Array.from({ length: 20_000 }, random.uniform);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    expect(mean).toBeCloseTo(0.5, 1);
    const quarters = [0, 0, 0, 0];
    for (const value of values) quarters[Math.floor(value * 4)]!++;
    for (const count of quarters) expect(count / values.length).toBeCloseTo(0.25, 1);
  });

  it("draws standard normals", () => {
    const random = seededRandom(7);
    const values = Array.from({ length: 20_000 }, random.normal);
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length;
    expect(mean).toBeCloseTo(0, 1);
    expect(variance).toBeCloseTo(1, 1);
  });

  it("refuses seeds outside 0..2^32-1", () => {
    expect(() => seededRandom(-1)).toThrow(RangeError);
    expect(() => seededRandom(MAX_SEED + 1)).toThrow(RangeError);
    expect(() => seededRandom(1.5)).toThrow(RangeError);
  });
});

describe("doodleFeeds", () => {
  it("one-hot encodes the class at its manifest position + 1 and draws the latent from the seed", () => {
    const feeds = doodleFeeds(38, 50, 99);
    expect(feeds.label!.dims).toEqual([1, 51]);
    expect([...feeds.label!.data].indexOf(1)).toBe(39);
    expect(feeds.label!.data.reduce((sum, value) => sum + value, 0)).toBe(1);
    expect(feeds.latent!.dims).toEqual([1, 16]);
    expect(feeds.latent!.data).toEqual(doodleFeeds(0, 50, 99).latent!.data);
    expect(feeds.latent!.data).not.toEqual(doodleFeeds(38, 50, 100).latent!.data);
    for (const value of feeds.latent!.data) expect(value >= 0 && value < 1).toBe(true);
  });
});

describe.skipIf(!hasMirrorModel("cvae-quickdraw"))("the doodle generator with the real model", () => {
  let context: WorkerContext;
  let generator: ImageGenerator;
  const signal = new AbortController().signal;
  const params = (fields: Partial<GenerationParams>): GenerationParams => ({ prompt: "owl", negativePrompt: "", width: 128, height: 128, seed: 1, ...fields });

  const dataDir = fileTempDir("doodle");
  beforeAll(async () => {
    const config = loadConfig({ ATELIER_DATA_DIR: dataDir, ATELIER_MODELS_DIR: await installModels(modelsFolder, ["cvae-quickdraw"]), LOG_LEVEL: "silent" });
    context = createWorkerContext(config, createLogger("silent"));
    generator = createDoodleGenerator(catalogEntry("cvae-quickdraw")!, context);
  });
  afterAll(async () => {
    await context.runtime.dispose();
  });

  it("draws the named class in one reported step, reproducibly", async () => {
    const steps: Array<[number, number]> = [];
    const first = await generator.generate(params({ prompt: "Two Owls!" }), (step, total) => steps.push([step, total]), signal);
    expect(steps).toEqual([[1, 1]]);
    expect(first.steps).toBe(1);
    expect(first.interpretation).toBe('Quick, Draw! class "owl" (from "Owls")');
    expect(first.image).toMatchObject({ width: 128, height: 128, channels: 1 });
    const again = await generator.generate(params({ prompt: "owl" }), () => undefined, signal);
    expect(again.image.data).toEqual(first.image.data);
    const other = await generator.generate(params({ prompt: "owl", seed: 2 }), () => undefined, signal);
    expect(other.image.data).not.toEqual(first.image.data);
  });

  it("refuses a prompt that names no class with an issue on prompt", async () => {
    const error = await generator.generate(params({ prompt: "a sunset" }), () => undefined, signal).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AtelierError);
    expect((error as AtelierError).code).toBe("INVALID_INPUT");
    expect((error as AtelierError).issues?.[0]?.path).toBe("prompt");
  });

  it("stops before running the model when the call is already cancelled", async () => {
    const controller = new AbortController();
    controller.abort(new AtelierError("CANCELLED", "gone"));
    await expect(generator.generate(params({}), () => undefined, controller.signal)).rejects.toMatchObject({ code: "CANCELLED" });
  });

  it("turns real model output into smooth lines where a nearest-neighbour upscale is blocky", async () => {
    const model = context.runtime.model("cvae-quickdraw/default", context.models.graphLoader(catalogEntry("cvae-quickdraw")!, "default"));
    const outputs = await model.run(doodleFeeds(6, 50, 5));
    const map = { data: outputs.image!.data, width: 28, height: 28 };
    const smooth = renderDoodle(map, 224, 224, { ...DOODLE_STYLE, margin: 0 });
    const blocky = nearestNeighbourDrawing(map, 8);
    expect(greyLevels(smooth)).toBeGreaterThan(2);
    expect(blockiness(blocky, 8)).toBe(1);
    expect(blockiness(smooth, 8)).toBeLessThan(0.3);
  });
});
