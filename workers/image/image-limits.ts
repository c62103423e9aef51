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
