/** The router's one way to turn a client's `imageUrl` into bytes, with the configured limits. */
import type { AtelierConfig } from "../../core/config.js";
import { fetchImage, fetchImageOptionsFromConfig, type FetchedImage } from "./fetch-image.js";

export interface ImageSource {
  /** `urlBytes`: `imageUrl`'s own bytes when the caller has them (RequestContext.bodyStringBytes). */
  fetch(imageUrl: string, signal?: AbortSignal, urlBytes?: Uint8Array): Promise<FetchedImage>;
}

export function createImageSource(config: Pick<AtelierConfig, "fetch" | "images">): ImageSource {
  const options = fetchImageOptionsFromConfig(config);
  return { fetch: (imageUrl, signal, urlBytes) => fetchImage(imageUrl, options, signal, urlBytes) };
}
