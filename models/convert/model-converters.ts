/** The project's converters, as the installer and the model loader call them: source folder → ONNX bytes. */
import type { Conversion } from "../catalog/catalog-types.js";
import { convertFastStyleCheckpoint } from "./fast-style-checkpoint-to-onnx.js";
import { convertKerasToOnnx } from "./keras-to-onnx.js";
import { readTfjsLayersModel } from "./tfjs-layers-model.js";
import type { ModelConverters } from "../store/model-installer.js";

export async function convertTfjsLayers(folder: string, tensorNames: Record<string, string> = {}): Promise<Uint8Array> {
  return convertKerasToOnnx(await readTfjsLayersModel(folder), { inputNames: tensorNames, outputNames: tensorNames }).bytes;
}

export const modelConverters: ModelConverters = {
  "tfjs-layers": (folder, conversion) =>
    convertTfjsLayers(folder, (conversion as Extract<Conversion, { from: "tfjs-layers" }>).tensorNames),
  "fast-style-checkpoint": async (folder) => (await convertFastStyleCheckpoint(folder)).bytes,
};
