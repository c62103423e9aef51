/** `strength`: how much of the painting shows over the photo, a per-pixel linear mix. */
import { AtelierError } from "../../core/errors.js";
import { toSample } from "../image/image-tensor.js";
import type { RawImage } from "../image/raw-image.js";

/** `original` + `strength` x (`painted` - `original`), for `strength` 0 (the photo) to 1 (the painting). */
export function blendWithOriginal(original: RawImage, painted: RawImage, strength: number): RawImage {
  if (original.data.length !== painted.data.length || original.width !== painted.width || original.channels !== painted.channels) {
    throw new AtelierError("INTERNAL", "Expected the painting and the original at the same size and channel count.");
  }
  if (strength >= 1) return painted;
  const out = new Uint8Array(original.data.length);
  for (let i = 0; i < out.length; i++) out[i] = toSample(original.data[i]! + strength * (painted.data[i]! - original.data[i]!));
  return { ...original, data: out };
}
