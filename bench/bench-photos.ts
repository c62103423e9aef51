/**
 * The photographs of the upscaling quality bench, in two sets kept apart on purpose:
 *
 * - tuning: the six photos of scripts/fetch-test-photos.sh (tests use them too). The default models
 *   and the time budget of models/requests/upscale-choice.ts were chosen on these.
 * - reporting: photos the project never tuned on, for the figures the README reports: fur, foliage,
 *   a face, text, buildings, an aerial view, a circuit board, feathers.
 *
 * Every photo comes from a Debian package, downloaded (apt-get download) and unpacked (dpkg -x) into
 * the cache folder, never installed; the licence recorded here is the one the package's copyright file
 * gives for the file. Not for the reporting set: mate-backgrounds and plasma-workspace-wallpapers,
 * which training/ trains on.
 *
 * Large wallpapers are reduced (Lanczos-3, short side `shortSide`) before the centre crop, so a crop
 * holds a scene rather than a few defocused pixels of a 6000-pixel photo.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";

export interface BenchPhoto {
  /** File name in the cache folder. */
  name: string;
  set: "tuning" | "reporting";
  /** What the photo tests. */
  subject: string;
  /** Debian package that ships it. */
  debianPackage: string;
  /** Path inside the package. */
  packagePath: string;
  /** Licence of the file per the package's debian/copyright (and the upstream notice, where it says more). */
  licence: string;
  /** When set, the photo is reduced so its short side is this many pixels. */
  shortSide?: number;
}

const SKIMAGE = "usr/lib/python3/dist-packages/skimage/data";
const OPENCV = "usr/share/doc/opencv-doc/examples/data";
const OPENCV_LICENCE = "Apache-2.0 AND BSD-3-Clause (opencv-doc's debian/copyright, Files: *; no separate notice for samples/data)";

export const BENCH_PHOTOS: readonly BenchPhoto[] = [
  { name: "astronaut.png", set: "tuning", subject: "face, portrait", debianPackage: "python3-skimage", packagePath: `${SKIMAGE}/astronaut.png`, licence: "public domain (NASA)" },
  { name: "camera.png", set: "tuning", subject: "grey, person, grass", debianPackage: "python3-skimage", packagePath: `${SKIMAGE}/camera.png`, licence: "CC0 (Lav Varshney)" },
  { name: "chelsea.png", set: "tuning", subject: "cat fur", debianPackage: "python3-skimage", packagePath: `${SKIMAGE}/chelsea.png`, licence: "CC0 (Stefan van der Walt)" },
  { name: "coffee.png", set: "tuning", subject: "cup, wood grain", debianPackage: "python3-skimage", packagePath: `${SKIMAGE}/coffee.png`, licence: "CC0 (Rachel Michetti)" },
  { name: "motorcycle_left.png", set: "tuning", subject: "machine, edges", debianPackage: "python3-skimage", packagePath: `${SKIMAGE}/motorcycle_left.png`, licence: "scikit-image data (Middlebury stereo set), BSD-3-Clause package" },
  { name: "rocket.jpg", set: "tuning", subject: "rocket, sky", debianPackage: "python3-skimage", packagePath: `${SKIMAGE}/rocket.jpg`, licence: "public domain (SpaceX)" },
  { name: "baboon.jpg", set: "reporting", subject: "fur (mandrill)", debianPackage: "opencv-doc", packagePath: `${OPENCV}/baboon.jpg`, licence: OPENCV_LICENCE },
  { name: "squirrel_cls.jpg", set: "reporting", subject: "fur, foliage", debianPackage: "opencv-doc", packagePath: `${OPENCV}/squirrel_cls.jpg`, licence: OPENCV_LICENCE },
  { name: "messi5.jpg", set: "reporting", subject: "face and figure, lawn, crowd", debianPackage: "opencv-doc", packagePath: `${OPENCV}/messi5.jpg`, licence: OPENCV_LICENCE },
  { name: "imageTextN.png", set: "reporting", subject: "printed text", debianPackage: "opencv-doc", packagePath: `${OPENCV}/imageTextN.png`, licence: OPENCV_LICENCE },
  { name: "board.jpg", set: "reporting", subject: "circuit board, small lettering", debianPackage: "opencv-doc", packagePath: `${OPENCV}/board.jpg`, licence: OPENCV_LICENCE },
  { name: "leuvenA.jpg", set: "reporting", subject: "building, brick", debianPackage: "opencv-doc", packagePath: `${OPENCV}/leuvenA.jpg`, licence: OPENCV_LICENCE },
  { name: "aero3.jpg", set: "reporting", subject: "aerial view of a city", debianPackage: "opencv-doc", packagePath: `${OPENCV}/aero3.jpg`, licence: OPENCV_LICENCE },
  { name: "butterfly.jpg", set: "reporting", subject: "butterfly, leaves", debianPackage: "opencv-doc", packagePath: `${OPENCV}/butterfly.jpg`, licence: OPENCV_LICENCE },
  { name: "grass.png", set: "reporting", subject: "grass (grey)", debianPackage: "python3-skimage", packagePath: `${SKIMAGE}/grass.png`, licence: "CC0 (scikit-image's notice)" },
  {
    name: "kleiber.png",
    set: "reporting",
    subject: "bird feathers, bokeh",
    debianPackage: "lomiri-wallpapers-20.04",
    packagePath: "usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg",
    licence: "CC-BY-SA-3.0 (Lukas Baubkus, 2021)",
    shortSide: 768,
  },
];

/** The cache folder of the bench photos (ignored by git like all of data/). */
export const BENCH_PHOTO_DIR = process.env.ATELIER_BENCH_PHOTOS ?? "data/bench-photos";

/** Downloads and unpacks the packages of the photos missing from {@link BENCH_PHOTO_DIR}; returns the folder. */
export async function ensureBenchPhotos(photos: readonly BenchPhoto[] = BENCH_PHOTOS): Promise<string> {
  const missing = photos.filter((photo) => !fs.existsSync(path.join(BENCH_PHOTO_DIR, photo.name)));
  if (missing.length === 0) return BENCH_PHOTO_DIR;
  fs.mkdirSync(BENCH_PHOTO_DIR, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-bench-photos-"));
  try {
    const packages = [...new Set(missing.map((photo) => photo.debianPackage))];
    const download = () => execFileSync("apt-get", ["download", ...packages], { cwd: work, stdio: "ignore" });
    try {
      download();
    } catch {
      execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore" });
      download();
    }
    for (const name of packages) {
      const deb = fs.readdirSync(work).find((file) => file.startsWith(`${name}_`) && file.endsWith(".deb"))!;
      execFileSync("dpkg", ["-x", path.join(work, deb), path.join(work, name)]);
    }
    for (const photo of missing) {
      const from = path.join(work, photo.debianPackage, photo.packagePath);
      const to = path.join(BENCH_PHOTO_DIR, photo.name);
      if (photo.shortSide === undefined) fs.copyFileSync(from, to);
      else {
        const { width = 0, height = 0 } = await sharp(from).metadata();
        const factor = photo.shortSide / Math.min(width, height);
        await sharp(from).resize(Math.round(width * factor), Math.round(height * factor), { kernel: "lanczos3" }).png().toFile(to);
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return BENCH_PHOTO_DIR;
}
