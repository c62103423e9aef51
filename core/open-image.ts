/**
 * Opening untrusted image bytes: byte cap before decoding, pixel cap while decoding, first frame
 * only, EXIF orientation applied. Metadata is not carried to outputs (sharp drops it unless asked).
 */
import sharp, { type Metadata, type OutputInfo, type Sharp } from "sharp";
import { AtelierError } from "./errors.js";
import { ACCEPTED_IMAGE_FORMAT_NAMES, acceptedFormatOf } from "./image-formats.js";
import { megapixels, type ImageLimits } from "./image-limits.js";

export interface ImageInfo {
  /** Width in pixels after orientation. */
  width: number;
  /** Height in pixels after orientation. */
  height: number;
  /** Decoder name reported by libvips, e.g. "png", "jpeg". */
  format: string;
  hasAlpha: boolean;
  /** Colour channels before any alpha: 1 for grayscale, 3 for colour. */
  colorChannels: number;
}

export interface OpenedImage {
  info: ImageInfo;
  /** A fresh oriented pipeline over the bytes each time it is called. */
  pipeline: () => Sharp;
}

const UNDECODABLE = `The source is not an image this server can decode (${ACCEPTED_IMAGE_FORMAT_NAMES}).`;
const NOT_ACCEPTED = `The source is not an image in a format this server accepts (${ACCEPTED_IMAGE_FORMAT_NAMES}); SVG and other vector or document formats are refused.`;

export async function openImage(bytes: Uint8Array, limits: ImageLimits): Promise<OpenedImage> {
  if (bytes.byteLength === 0) throw new AtelierError("IMAGE_UNDECODABLE", "The source image is empty.");
  if (bytes.byteLength > limits.maxBytes) {
    throw new AtelierError(
      "IMAGE_TOO_LARGE",
      `The source image is ${bytes.byteLength} bytes, over this server's limit of ${limits.maxBytes} bytes (ATELIER_MAX_IMAGE_BYTES).`,
    );
  }
  // Judged by the file's signature before libvips sees it, so no other loader (SVG, PDF) ever runs.
  const format = acceptedFormatOf(bytes);
  if (!format) throw new AtelierError("IMAGE_UNDECODABLE", NOT_ACCEPTED);
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes, { pages: 1, limitInputPixels: false }).metadata();
  } catch (error) {
    throw new AtelierError("IMAGE_UNDECODABLE", UNDECODABLE, { cause: error });
  }
  if (metadata.format !== format.sharpFormat) throw new AtelierError("IMAGE_UNDECODABLE", NOT_ACCEPTED);
  const oriented = metadata.autoOrient ?? { width: metadata.width, height: metadata.height };
  const width = oriented.width ?? 0;
  // Animated inputs report the whole strip's height; one frame is pageHeight tall.
  const height = metadata.pages && metadata.pages > 1 && metadata.pageHeight ? metadata.pageHeight : (oriented.height ?? 0);
  if (width === 0 || height === 0) throw new AtelierError("IMAGE_UNDECODABLE", UNDECODABLE);
  if (width * height > limits.maxInputPixels) {
    throw new AtelierError(
      "IMAGE_TOO_LARGE",
      `The source image is ${width}x${height} (${megapixels(width * height)}), over this server's limit of ${megapixels(limits.maxInputPixels)} (ATELIER_MAX_INPUT_PIXELS).`,
    );
  }
  // libvips' auto-orientation costs a pass over the pixels even where there is nothing to turn (0.8 ms
  // of a 1 MP PNG's 15 ms decode, 7–10 ms at 12 MP), so it runs only for an EXIF orientation other than 1.
  const turned = metadata.orientation !== undefined && metadata.orientation !== 1;
  const pipeline = () => {
    const image = sharp(bytes, { limitInputPixels: limits.maxInputPixels, pages: 1, failOn: "error" });
    return turned ? image.rotate() : image;
  };
  const channels = metadata.channels ?? 3;
  const hasAlpha = metadata.hasAlpha ?? false;
  return {
    info: {
      width,
      height,
      format: metadata.format ?? "unknown",
      hasAlpha,
      colorChannels: Math.max(1, channels - (hasAlpha ? 1 : 0)),
    },
    pipeline,
  };
}

/** Runs a sharp pipeline to a buffer, turning decoder failures into public errors. */
export async function renderPipeline(image: Sharp): Promise<{ data: Buffer; info: OutputInfo }> {
  try {
    return await image.toBuffer({ resolveWithObject: true });
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    if (/pixel limit/i.test(text)) {
      throw new AtelierError("IMAGE_TOO_LARGE", "The source image exceeds this server's pixel limit (ATELIER_MAX_INPUT_PIXELS).", { cause: error });
    }
    throw new AtelierError("IMAGE_UNDECODABLE", "The source image is corrupt or truncated and cannot be decoded.", { cause: error });
  }
}

