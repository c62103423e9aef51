/**
 * Finding 2: style transfer failed inside the model (500) on images with a side of 4 px or less at
 * working size ("Pad reflect: pre-pad (4) exceeds maximum allowed (3)"). Every size the service
 * accepts must come back painted, at its own size, for every style family. Painted means changed
 * from the photo, not blank, and in the style's colours: the palette of the same style's painting of
 * a square gradient, which the input gradient's own colours mostly lie outside of.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { createLogger } from "../../../core/logger.js";
import { OutputFormat } from "../../../gen/atelier/image/v1/image.js";
import type { RawImage } from "../../../workers/image/raw-image.js";
import { styleTransfer } from "../../../workers/style/style-service.js";
import { DEFAULT_STYLE_SETTINGS } from "../../../workers/style/style-settings.js";
import type { WorkerContext } from "../../../workers/worker-context.js";
import { createWorkerContext } from "../../../workers/worker-server.js";
import { installModels } from "../../support/installed-models.js";
import { fileTempDir } from "../../support/temp-dir.js";
import { hasMirrorModel } from "../../support/test-assets.js";
import { gradientPng } from "../../support/test-images.js";
import { decode, difference, isOneColour, palette, shareInPalette } from "../../style/style-images.js";

const modelsFolder = fileTempDir("test-models");

const available = hasMirrorModel("style-fast-ml5") && hasMirrorModel("style-fast-nc16");
const STYLES = ["candy-lite", "udnie"];
let context: WorkerContext;
const palettes = new Map<string, Set<number>>();

async function paint(source: Buffer, style: string): Promise<RawImage> {
  const response = await styleTransfer(
    { image: { data: source, mimeType: "", width: 0, height: 0 }, style, strength: undefined, preserveColors: false, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG },
    context,
    DEFAULT_STYLE_SETTINGS,
    new AbortController().signal,
  );
  return decode(response.image!.data);
}

beforeAll(async () => {
  if (!available) return;
  const modelsDir = await installModels(modelsFolder, STYLES);
  context = createWorkerContext(loadConfig({ ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
  for (const style of STYLES) palettes.set(style, palette(await paint(await gradientPng(256, 256), style)));
});
afterAll(async () => {
  await context?.runtime.dispose();
});

// 100000x1 is reduced to 1024x1 by the working size, the thinnest case the networks see.
const SIZES: [number, number][] = [[1, 1], [4, 4], [64, 4], [5, 3], [2048, 8], [100000, 1]];

describe.skipIf(!available)("finding 2: style transfer on thin images", () => {
  for (const style of STYLES) {
    for (const [width, height] of SIZES) {
      it(`${style} paints ${width}x${height} at its own size`, async () => {
        const source = await gradientPng(width, height);
        const painted = await paint(source, style);
        expect([painted.width, painted.height]).toEqual([width, height]);
        // The styles repaint every colour: an unpainted (resized) photo would differ by nothing.
        expect(difference(painted, await decode(source)).mean).toBeGreaterThan(40);
        // One pixel has no palette to speak of (the 1x1 gradient is black, a colour of both styles).
        if (width * height === 1) return;
        expect(isOneColour(painted)).toBe(false);
        expect(shareInPalette(painted, palettes.get(style)!)).toBeGreaterThan(0.6);
      });
    }
  }

  it("tells the styles' colours from the gradient's, so the palette check can fail", async () => {
    for (const style of STYLES) {
      for (const [width, height] of SIZES.filter(([w, h]) => w * h > 1)) {
        expect(shareInPalette(await decode(await gradientPng(width, height)), palettes.get(style)!)).toBeLessThan(0.4);
      }
    }
  });
});
