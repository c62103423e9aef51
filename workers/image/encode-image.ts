/** Encodes a finished image (raw pixels or a sharp pipeline) into the requested output format. */
import type { Sharp } from "sharp";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import type { Image } from "../../gen/atelier/image/v1/image.js";
import { AtelierError } from "../../core/errors.js";
import { encodePng } from "./png-encoder.js";
import { rawImagePipeline, type RawImage } from "./raw-image.js";

const JPEG_QUALITY = 92;
const WEBP_QUALITY = 90;

/**
 * libvips' PNG settings, for pipelines (raw pixels take png-encoder.ts unless a caller names settings):
 * deflate level 2 with adaptive row filters: on photographs and their enlargements the filters are
 * what makes them compress (a quarter to a half smaller than level 6 unfiltered, in about the same
 * time), and higher levels save a few points for up to twice the time. A smaller response is as fast
 * end to end over loopback and faster over a real network. `npx tsx bench/png-encode.ts` prints the
 * sizes and times of levels 1 to 9 with and without filters.
 */
export const PNG_OPTIONS = { compressionLevel: 2, adaptiveFiltering: true } as const;

export type PngOptions = { compressionLevel: number; adaptiveFiltering: boolean };

function isRawImage(image: Sharp | RawImage): image is RawImage {
  return typeof (image as Sharp).toBuffer !== "function";
}

/**
 * @param image Raw pixels (1 to 4 channels; 1 and 2 are grey) or a sharp pipeline. Raw pixels become a
 *   PNG through png-encoder.ts, in parallel bands, unless `png` names libvips settings.
 * @param png libvips PNG settings, for a caller whose results compress differently from photographs.
 */
export async function encodeImage(image: Sharp | RawImage, format: OutputFormat, png?: PngOptions): Promise<Image> {
  const isPng = format !== OutputFormat.OUTPUT_FORMAT_JPEG && format !== OutputFormat.OUTPUT_FORMAT_WEBP;
  if (isRawImage(image)) {
    if (isPng && !png) return { data: await encodePng(image), mimeType: "image/png", width: image.width, height: image.height };
    // sharp takes raw grey for sRGB unless told.
    image = image.channels <= 2 ? rawImagePipeline(image).toColourspace("b-w") : rawImagePipeline(image);
  }
  let encoder: Sharp;
  let mimeType: string;
  switch (format) {
    case OutputFormat.OUTPUT_FORMAT_JPEG:
      // JPEG has no alpha: flatten onto white, which is what people expect of a "white background".
      encoder = image.flatten({ background: "#ffffff" }).jpeg({ quality: JPEG_QUALITY, mozjpeg: true });
      mimeType = "image/jpeg";
      break;
    case OutputFormat.OUTPUT_FORMAT_WEBP:
      encoder = image.webp({ quality: WEBP_QUALITY, alphaQuality: 100 });
      mimeType = "image/webp";
      break;
    default:
      encoder = image.png(png ?? PNG_OPTIONS);
      mimeType = "image/png";
  }
  // Every caller hands over raw pixels it made itself, so a failure here is the server's, never the client's image.
  try {
    const { data, info } = await encoder.toBuffer({ resolveWithObject: true });
    return { data, mimeType, width: info.width, height: info.height };
  } catch (error) {
    throw new AtelierError("INTERNAL", `The result could not be encoded as ${mimeType}.`, { cause: error });
  }
}
