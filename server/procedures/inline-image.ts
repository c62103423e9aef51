/**
 * The size of a request's inline image (a data URL), for the checks made before a job is accepted:
 * read from the image's header with the worker's own limits on bytes, pixels and formats, so a job
 * whose image the worker would refuse is refused with the same error. An image behind an http(s)
 * URL is fetched only by the job, so its size is not known here.
 */
import type { RequestContext } from "../context.js";
import { isDataUrl } from "../image-source/fetch-image.js";
import { loadSourceImage } from "./image-io.js";

export interface ImageSize {
  width: number;
  height: number;
}

export async function inlineImageSize(ctx: RequestContext, imageUrl: string): Promise<ImageSize | undefined> {
  if (!isDataUrl(imageUrl, ctx.bodyStringBytes?.(imageUrl))) return undefined;
  const image = await loadSourceImage(ctx, imageUrl);
  // Loaded only here: a router reads an image's header only for this check, so a router whose
  // jobs never carry an inline image never loads sharp (test/facade/router-imports.test.ts).
  const { openImage } = await import("../../core/open-image.js");
  const { info } = await openImage(image.data, ctx.services.config.images);
  return { width: info.width, height: info.height };
}
