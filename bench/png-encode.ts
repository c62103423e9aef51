/**
 * PNG encoding, measured: time and size of the service's own banded encoder (workers/image/png-encoder.ts,
 * what raw results take), then of sharp's PNG encoder at deflate levels 1 to 6 (and 9), with and
 * without adaptive row filtering (what encodeImage gives pipelines), on what the service sends back: the
 * test photographs as they are, the same enlarged x2 and x4 by the lanczos model, and 256 px crops
 * upscaled x4 by LSDIR (when the model mirror has it). workers/image/encode-image.ts and png-encoder.ts
 * take their settings from these tables. Wall time and the process's CPU time (every thread: the
 * banded encoder deflates on libuv's pool) are both printed.
 *
 *   npx tsx bench/png-encode.ts
 *
 * Needs the photographs of scripts/fetch-test-photos.sh (data/test-photos). Times are the best of 3
 * passes over each set, summed over its images, per megapixel; sizes are the share of the raw 8-bit
 * pixels. Each image is encoded on its own, as the service does, so libvips uses one thread per image.
 */
import fs from "node:fs";
import os from "node:os";
import sharp from "sharp";
import { PNG_OPTIONS } from "../workers/image/encode-image.js";
import { encodePng } from "../workers/image/png-encoder.js";
import { rawImagePipeline, type RawImage } from "../workers/image/raw-image.js";
import { catalogEntry } from "../workers/catalog/model-catalog.js";
import { lanczosUpscale } from "../workers/upscale/lanczos-upscaler.js";
import { upscaleWithNetwork } from "../workers/upscale/network-pipeline.js";
import { upscalePath } from "../workers/upscale/upscale-choice.js";
import { benchModels, printTable } from "./upscale-models.js";
import { centreCrop } from "./upscale-quality.js";

const PHOTOS = ["astronaut.png", "camera.png", "chelsea.png", "coffee.png", "motorcycle_left.png", "rocket.jpg"];
const PHOTO_DIR = process.env.ATELIER_TEST_PHOTOS ?? "data/test-photos";
const PASSES = 3;
const LEVELS = [1, 2, 3, 4, 5, 6, 9];

async function imageSets(): Promise<Record<string, RawImage[]>> {
  const photos: RawImage[] = [];
  for (const name of PHOTOS) {
    const { data, info } = await sharp(`${PHOTO_DIR}/${name}`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    photos.push({ data, width: info.width, height: info.height, channels: info.channels as RawImage["channels"] });
  }
  const sets: Record<string, RawImage[]> = {
    "photos": photos,
    "photos, lanczos x2": await Promise.all(photos.map((photo) => lanczosUpscale(photo, 2))),
    "photos, lanczos x4": await Promise.all(photos.map((photo) => lanczosUpscale(photo, 4))),
  };
  const bench = await benchModels(["lsdir-compact-x4"]);
  try {
    const lsdir = bench.usable[0];
    if (lsdir) {
      const crops = await Promise.all(PHOTOS.map((name) => centreCrop(`${PHOTO_DIR}/${name}`, 256)));
      const upscaled: RawImage[] = [];
      for (const crop of crops) upscaled.push((await upscaleWithNetwork(crop, catalogEntry(lsdir.id)!, 4, upscalePath(lsdir, 4)!, bench)).image);
      sets["256 px crops, lsdir-compact-x4 x4"] = upscaled;
    }
  } finally {
    await bench.runtime.dispose();
  }
  return sets;
}

if (!fs.existsSync(`${PHOTO_DIR}/chelsea.png`)) throw new Error(`No photographs in ${PHOTO_DIR}: run scripts/fetch-test-photos.sh.`);
console.log(`PNG encoding: ${os.availableParallelism()} cores, load average ${os.loadavg().map((value) => value.toFixed(1)).join(" ")}; the service uses ${JSON.stringify(PNG_OPTIONS)}`);
for (const [name, images] of Object.entries(await imageSets())) {
  const megapixels = images.reduce((sum, image) => sum + image.width * image.height, 0) / 1e6;
  const rawBytes = images.reduce((sum, image) => sum + image.data.length, 0);
  const rows: (string | number)[][] = [];
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const measure = async (encode: (image: RawImage) => Promise<Uint8Array>) => {
    let best = Infinity;
    let bestCpu = Infinity;
    let bytes = 0;
    for (let pass = 0; pass < PASSES; pass++) {
      let ms = 0;
      let cpu = 0;
      bytes = 0;
      for (const image of images) {
        const started = performance.now();
        const cpuStarted = cpuMs();
        bytes += (await encode(image)).length;
        ms += performance.now() - started;
        cpu += cpuMs() - cpuStarted;
      }
      best = Math.min(best, ms);
      bestCpu = Math.min(bestCpu, cpu);
    }
    return [Math.round(best / megapixels), Math.round(bestCpu / megapixels), `${((bytes / rawBytes) * 100).toFixed(1)}%`, (bytes / 1e6).toFixed(2)];
  };
  rows.push(["banded (png-encoder.ts)", "average", ...(await measure(encodePng))]);
  for (const adaptiveFiltering of [false, true]) {
    for (const compressionLevel of LEVELS) {
      rows.push([`libvips ${compressionLevel}`, adaptiveFiltering ? "adaptive" : "none", ...(await measure((image) => rawImagePipeline(image).png({ compressionLevel, adaptiveFiltering }).toBuffer()))]);
    }
  }
  printTable(`${name}: ${images.length} images, ${megapixels.toFixed(1)} MP`, ["encoder, level", "filter", "best ms / MP", "best CPU ms / MP", "size / raw", "MB"], rows);
}
