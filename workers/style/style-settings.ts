/**
 * Style-transfer settings (from core/config.ts: ATELIER_STYLE_WORKING_SIZE, ATELIER_STYLE_TILE_SIZE).
 *
 * Fast-neural-style networks paint strokes of a fixed size in pixels, whatever the image size, so the
 * resolution the network works at decides how the result looks: at 4000 px a Udnie stroke is a
 * speck, at 1024 px it reads as a brush mark. Large photos are therefore painted at a working size
 * and the painting is resized back to the photo's size.
 */

export interface StyleSettings {
  /**
   * Longest side, in pixels, that a style is painted at (64 to 8192; default 1024). Larger images are
   * reduced to it and the result is resized back; smaller ones are painted at their own size.
   */
  workingSize: number;
  /**
   * Longest tile side, in pixels of the picture, one network run paints (128 to 8192; default 1024,
   * so a picture at the default working size is painted whole). A larger working image is painted in
   * overlapping tiles blended together. A run also paints the family's mirrored edge margin (48 px a
   * side for ml5) and needs about 0.9 KiB of memory per pixel (about 1.1 GiB at 1120x1120 for ml5).
   */
  tileSize: number;
}

export const DEFAULT_STYLE_SETTINGS: StyleSettings = { workingSize: 1024, tileSize: 1024 };
