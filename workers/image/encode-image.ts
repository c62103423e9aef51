/** Encodes a finished pipeline into the requested output format. */
import type { Sharp } from "sharp";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import type { Image } from "../../gen/atelier/image/v1/image.js";
import { renderPipeline } from "./open-image.js";

const JPEG_QUALITY = 92;
const WEBP_QUALITY = 90;

export async function encodeImage(image: Sharp, format: OutputFormat): Promise<Image> {
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
      encoder = image.png({ compressionLevel: 6, adaptiveFiltering: false });
      mimeType = "image/png";
  }
  const { data, info } = await renderPipeline(encoder);
  return { data, mimeType, width: info.width, height: info.height };
}
