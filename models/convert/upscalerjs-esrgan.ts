/**
 * The UpscalerJS ESRGAN weight packages (`@upscalerjs/esrgan-slim|medium|thick`): where their
 * models live and what their converted ONNX graphs expect.
 *
 * Value ranges come from the packages' own model definitions
 * (`dist/*\/packages/shared/src/esrgan/esrgan.js`, `getESRGANModelDefinition`): the `rdn`
 * architecture (slim, medium) declares `inputRange`/`outputRange` `[0, 255]`; the `rrdn`
 * architecture (thick) declares `[0, 1]` and registers the custom layers `MultiplyBeta` and
 * `PixelShuffle<N>x`. Outputs are not clipped by the network (UpscalerJS clips afterwards), so
 * callers must clamp to the range.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { ConvertedOnnxModel } from "./converted-model.js";
import { convertKerasToOnnx } from "./keras-to-onnx.js";
import { readTfjsLayersModel } from "./tfjs-layers-model.js";

/** The three published sizes. */
export const ESRGAN_VARIANTS = ["slim", "medium", "thick"] as const;
/** One of {@link ESRGAN_VARIANTS}. */
export type EsrganVariant = (typeof ESRGAN_VARIANTS)[number];
/** The published upscaling factors. */
export const ESRGAN_SCALES = [2, 3, 4, 8] as const;
/** One of {@link ESRGAN_SCALES}. */
export type EsrganScale = (typeof ESRGAN_SCALES)[number];

/** How to feed a converted ESRGAN model and read its result. */
export interface EsrganSignature {
  packageName: `@upscalerjs/esrgan-${EsrganVariant}`;
  variant: EsrganVariant;
  scale: EsrganScale;
  architecture: "rdn" | "rrdn";
  input: { name: "input"; layout: "NCHW"; channels: "RGB"; dims: ["batch", 3, "height", "width"]; range: readonly [number, number] };
  output: {
    name: "output";
    layout: "NCHW";
    channels: "RGB";
    dims: ["batch", 3, string, string];
    range: readonly [number, number];
    /** The network does not clamp; values slightly outside `range` occur and must be clipped. */
    clipped: false;
  };
}

/** The I/O contract of one ESRGAN model (any height/width: all convolutions are stride 1, SAME). */
export function esrganSignature(variant: EsrganVariant, scale: EsrganScale): EsrganSignature {
  const architecture = variant === "thick" ? "rrdn" : "rdn";
  const range = architecture === "rdn" ? ([0, 255] as const) : ([0, 1] as const);
  return {
    packageName: `@upscalerjs/esrgan-${variant}`,
    variant,
    scale,
    architecture,
    input: { name: "input", layout: "NCHW", channels: "RGB", dims: ["batch", 3, "height", "width"], range },
    output: {
      name: "output",
      layout: "NCHW",
      channels: "RGB",
      dims: ["batch", 3, `height*${scale}`, `width*${scale}`],
      range,
      clipped: false,
    },
  };
}

/** The doc string stored in a converted ESRGAN model. */
export function esrganDocString(s: EsrganSignature): string {
  const [lo, hi] = s.input.range;
  return (
    `${s.packageName} x${s.scale} (${s.architecture}), converted from its TF.js layers model. ` +
    `Input "input": float32 [batch, 3, height, width], RGB, values ${lo}..${hi}. ` +
    `Output "output": float32 [batch, 3, height*${s.scale}, width*${s.scale}], RGB, values ${lo}..${hi} ` +
    `(not clipped by the network: clamp to ${lo}..${hi}). Any height and width.`
  );
}

/** The installed package's `models/x<scale>` folder. */
export function esrganModelDir(variant: EsrganVariant, scale: EsrganScale): string {
  const packageName = `@upscalerjs/esrgan-${variant}`;
  // The package's exports map hides package.json, so start from its entry point and walk up.
  let dir = path.dirname(createRequire(import.meta.url).resolve(packageName));
  while (!fs.existsSync(path.join(dir, "package.json")) || !fs.existsSync(path.join(dir, "models"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot locate the folder of ${packageName}`);
    dir = parent;
  }
  return path.join(dir, "models", `x${scale}`);
}

/** Recognises `.../@upscalerjs/esrgan-<variant>/models/x<scale>` folders (for the CLI). */
export function detectEsrganModelDir(modelDir: string): { variant: EsrganVariant; scale: EsrganScale } | undefined {
  const match = /@upscalerjs[\\/]esrgan-(slim|medium|thick)[\\/]models[\\/]x(2|3|4|8)[\\/]?$/.exec(path.resolve(modelDir));
  if (!match) return undefined;
  return { variant: match[1] as EsrganVariant, scale: Number(match[2]) as EsrganScale };
}

/** Converts one installed ESRGAN model; the signature is also written into the model's doc string. */
export async function convertEsrgan(
  variant: EsrganVariant,
  scale: EsrganScale,
  modelDir = esrganModelDir(variant, scale),
): Promise<ConvertedOnnxModel & { esrgan: EsrganSignature }> {
  const esrgan = esrganSignature(variant, scale);
  const converted = convertKerasToOnnx(await readTfjsLayersModel(modelDir), { docString: esrganDocString(esrgan) });
  return { ...converted, esrgan };
}
