/** Small real images made with sharp for tests: gradients (so resampling is observable), alpha, EXIF. */
import sharp from "sharp";

/** A colour gradient PNG of `width` x `height`, optionally with a radial alpha. */
export async function gradientPng(width: number, height: number, options: { alpha?: boolean } = {}): Promise<Buffer> {
  const channels = options.alpha ? 4 : 3;
  const pixels = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const offset = (y * width + x) * channels;
      pixels[offset] = Math.round((255 * x) / Math.max(1, width - 1));
      pixels[offset + 1] = Math.round((255 * y) / Math.max(1, height - 1));
      pixels[offset + 2] = (x * 7 + y * 13) % 256;
      if (options.alpha) {
        const dx = x - width / 2;
        const dy = y - height / 2;
        pixels[offset + 3] = Math.hypot(dx, dy) < Math.min(width, height) / 3 ? 255 : 0;
      }
    }
  }
  return sharp(pixels, { raw: { width, height, channels } }).png().toBuffer();
}

export function dataUrl(bytes: Buffer, mimeType = "image/png"): string {
  return `data:${mimeType};base64,${bytes.toString("base64")}`;
}

/** Decodes a response's `data:` URL back to bytes. */
export function bytesOfDataUrl(url: string): Buffer {
  const match = /^data:[^;]+;base64,(.*)$/.exec(url);
  if (!match) throw new Error(`not a base64 data URL: ${url.slice(0, 40)}`);
  return Buffer.from(match[1]!, "base64");
}
