/** Real-photo crops as model inputs (NCHW for ONNX, NHWC for TF.js), so converters are compared on natural statistics. */
import sharp from "sharp";
import { permuteTensor } from "../../models/convert/permute-tensor.js";

/** One RGB crop in both layouts, values multiplied by `valueScale` (1 → 0..255, 1/255 → 0..1). */
export interface PhotoCrop {
  width: number;
  height: number;
  nhwc: Float32Array;
  nchw: Float32Array;
}

/** Crops `width`×`height` pixels at (`left`, `top`) from the photo at `file`. */
export async function photoCrop(
  file: string,
  region: { left: number; top: number; width: number; height: number },
  valueScale = 1,
): Promise<PhotoCrop> {
  const { data, info } = await sharp(file).removeAlpha().extract(region).raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`${file}: expected RGB, got ${info.channels} channels`);
  const nhwc = Float32Array.from(data, (v) => v * valueScale);
  const nchw = permuteTensor({ shape: [1, region.height, region.width, 3], data: nhwc }, [0, 3, 1, 2]).data;
  return { width: region.width, height: region.height, nhwc, nchw };
}
