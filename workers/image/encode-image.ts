/** Encodes a finished image (raw pixels or a sharp pipeline) into the requested output format. */
import type { Sharp } from "sharp";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import type { Image } from "../../gen/atelier/image/v1/image.js";
import { AtelierError } from "../../core/errors.js";
import { encodePng, type DeflateStrategy } from "./png-encoder.js";
import { rawImagePipeline, readRawImage, type RawImage } from "./raw-image.js";

const JPEG_QUALITY = 92;
const WEBP_QUALITY = 90;

/**
 * libvips' PNG settings, for pipelines (raw pixels take png-encoder.ts): deflate level 2 with adaptive
 * row filters: on photographs and their enlargements the filters are what makes them compress (a
 * quarter to a half smaller than level 6 unfiltered, in about the same time), and higher levels save
 * a few points for up to twice the time. A smaller response is as fast end to end over loopback and
 * faster over a real network. `npx tsx bench/png-encode.ts` prints the sizes and times of levels 1 to
 * 9 with and without filters.
 */
export const PNG_OPTIONS = { compressionLevel: 2, adaptiveFiltering: true } as const;

/**
 * An image as a step leaves it: its colour (grey or RGB) and, when it has transparency, its alpha as
 * a plane of its own, joined only by the encoder (no step makes an interleaved copy).
 */
export interface ColourAndAlpha {
  colour: RawImage;
  alpha?: RawImage | undefined;
}

export interface EncodeOptions {
  /**
   * How png-encoder.ts deflates raw pixels (default "huffman-only", for photographs and what networks
   * paint; "rle" where large areas are flat, as in cutouts and mattes). Pipelines take libvips' PNG_OPTIONS.
   */
  deflate?: DeflateStrategy;
  /**
   * For raw pixels still being made: makes rows `y` to `y + rows`, top to bottom. The PNG encoder calls
   * it band by band as it goes (png-encoder.ts `produceRows`); the libvips encoders need the whole
   * image, so it is called once for all rows first.
   */
  produceRows?: (y: number, rows: number) => void;
}

function isPipeline(image: Sharp | RawImage | ColourAndAlpha): image is Sharp {
  return typeof (image as Sharp).toBuffer === "function";
}

/** Raw pixels in the one shape both encoders take: colour, and a separate alpha plane or none. */
function asColourAndAlpha(image: RawImage | ColourAndAlpha): ColourAndAlpha {
  return "colour" in image ? image : { colour: image };
}

/**
 * libvips' pipeline over raw pixels: grey as grey (sharp takes raw grey for sRGB unless told), a
 * separate alpha joined as the last channel. sharp joins channels after its other operations,
 * flattening included, so for an encoder that flattens the alpha away (JPEG) the joined pixels are
 * rendered first.
 */
async function rawPipeline({ colour, alpha }: ColourAndAlpha, flattens: boolean): Promise<Sharp> {
  const pipeline = colour.channels <= 2 ? rawImagePipeline(colour).toColourspace("b-w") : rawImagePipeline(colour);
  if (!alpha) return pipeline;
  const plane = Buffer.from(alpha.data.buffer, alpha.data.byteOffset, alpha.data.length);
  const joined = pipeline.joinChannel(plane, { raw: { width: alpha.width, height: alpha.height, channels: 1 } });
  return flattens ? rawImagePipeline(await readRawImage(joined)) : joined;
}

/**
 * @param image Raw pixels (1 to 4 channels; 1 and 2 are grey), raw colour with a separate alpha
 *   plane, or a sharp pipeline. Raw pixels become a PNG through png-encoder.ts, in parallel bands.
 */
export async function encodeImage(image: Sharp | RawImage | ColourAndAlpha, format: OutputFormat, options: EncodeOptions = {}): Promise<Image> {
  const isPng = format !== OutputFormat.OUTPUT_FORMAT_JPEG && format !== OutputFormat.OUTPUT_FORMAT_WEBP;
  let pipeline: Sharp;
  if (isPipeline(image)) {
    pipeline = image;
  } else {
    const { colour, alpha } = asColourAndAlpha(image);
    if (isPng) {
      const data = await encodePng(colour, { alpha, strategy: options.deflate, produceRows: options.produceRows });
      return { data, mimeType: "image/png", width: colour.width, height: colour.height };
    }
    options.produceRows?.(0, colour.height);
    pipeline = await rawPipeline({ colour, alpha }, format === OutputFormat.OUTPUT_FORMAT_JPEG);
  }
  let encoder: Sharp;
  let mimeType: string;
  switch (format) {
    case OutputFormat.OUTPUT_FORMAT_JPEG:
      // JPEG has no alpha: flatten onto white, which is what people expect of a "white background".
      encoder = pipeline.flatten({ background: "#ffffff" }).jpeg({ quality: JPEG_QUALITY, mozjpeg: true });
      mimeType = "image/jpeg";
      break;
    case OutputFormat.OUTPUT_FORMAT_WEBP:
      encoder = pipeline.webp({ quality: WEBP_QUALITY, alphaQuality: 100 });
      mimeType = "image/webp";
      break;
    default:
      encoder = pipeline.png(PNG_OPTIONS);
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
