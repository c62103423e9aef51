import { AtelierError } from "./errors.js";

/** Bounds every worker applies to untrusted images, from configuration (ATELIER_MAX_*). */
export interface ImageLimits {
  /** Largest encoded input in bytes. */
  maxBytes: number;
  /** Largest decoded input in pixels (width x height). */
  maxInputPixels: number;
  /** Largest output in pixels. */
  maxOutputPixels: number;
}

export function megapixels(pixels: number): string {
  return `${(pixels / 1_000_000).toFixed(1)} MP`;
}

/** What to do about a result over the limit when the result has the source's size. */
export const SMALLER_IMAGE_HINT = "Use a smaller image.";

/** Refuses, before any work, an output over the configured pixel limit. */
export function assertOutputSize(width: number, height: number, limits: ImageLimits, hint: string): void {
  if (width * height > limits.maxOutputPixels) {
    throw new AtelierError(
      "OUTPUT_TOO_LARGE",
      `The result would be ${width}x${height} (${megapixels(width * height)}), over this server's limit of ${megapixels(limits.maxOutputPixels)} (ATELIER_MAX_OUTPUT_PIXELS). ${hint}`,
    );
  }
}
