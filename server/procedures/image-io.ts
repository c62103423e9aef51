/** Conversions between the REST/tRPC image fields and the workers' protobuf images. */
import { OutputFormat, type Image } from "../../gen/atelier/image/v1/image.js";
import { encodeBase64 } from "../../core/base64-slices.js";
import { AtelierError } from "../../core/errors.js";
import type { RequestContext } from "../context.js";
import type { OutputFormatName } from "../../contract/field-schemas.js";
import { OUTPUT_MIME_TYPES } from "../../contract/response-schemas.js";

const FORMATS: Record<OutputFormatName, OutputFormat> = {
  png: OutputFormat.OUTPUT_FORMAT_PNG,
  jpeg: OutputFormat.OUTPUT_FORMAT_JPEG,
  webp: OutputFormat.OUTPUT_FORMAT_WEBP,
};

export function toProtoFormat(name: OutputFormatName): OutputFormat {
  return FORMATS[name];
}

/** Fetches `imageUrl` (abandoned if the client disconnects) as a worker input image. */
export async function loadSourceImage(ctx: RequestContext, imageUrl: string): Promise<Image> {
  const source = await ctx.services.images.fetch(imageUrl, ctx.signal, ctx.bodyStringBytes?.(imageUrl));
  return { data: source.bytes, mimeType: source.contentType ?? "", width: 0, height: 0 };
}

/**
 * A worker's output image as the response's `data[]` entry: a data URL clients can pass back. Where
 * the HTTP edge writes the answer (RequestContext.keepImage) the bytes go to it as they are and
 * `url` holds its stand-in; elsewhere they are encoded where they lie, a slice at a time (a 12 MP
 * PNG is about 20 MB).
 */
export async function toImageResult(ctx: RequestContext, image: Image | undefined) {
  if (!image) throw new AtelierError("INTERNAL", "The worker returned no image.");
  const mimeType = OUTPUT_MIME_TYPES.find((type) => type === image.mimeType);
  if (!mimeType) throw new AtelierError("INTERNAL", `The worker returned an image of an unexpected type (${image.mimeType}).`);
  return {
    url: ctx.keepImage?.({ bytes: image.data, mimeType }) ?? `data:${image.mimeType};base64,${await encodeBase64(image.data)}`,
    mimeType,
    width: image.width,
    height: image.height,
  };
}

export function envelope(ctx: RequestContext, model: string) {
  ctx.note?.({ model });
  return { id: ctx.requestId, created: Math.floor(Date.now() / 1000), model };
}
