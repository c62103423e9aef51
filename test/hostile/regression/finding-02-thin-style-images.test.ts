/**
 * Finding 2: style transfer failed inside the model (500) on images with a side of 4 px or less at
 * working size ("Pad reflect: pre-pad (4) exceeds maximum allowed (3)"). Every size the service
 * accepts must come back painted, at its own size, for every style family.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { createLogger } from "../../../core/logger.js";
import { OutputFormat } from "../../../gen/atelier/image/v1/image.js";
import { styleTransfer } from "../../../workers/style/style-service.js";
import { DEFAULT_STYLE_SETTINGS } from "../../../workers/style/style-settings.js";
import type { WorkerContext } from "../../../workers/worker-context.js";
import { createWorkerContext } from "../../../workers/worker-server.js";
import { installedModelsDir } from "../../support/installed-models.js";
import { hasMirrorModel } from "../../support/test-assets.js";
import { gradientPng } from "../../support/test-images.js";
import { decode } from "../../style/style-images.js";

const available = hasMirrorModel("style-fast-ml5") && hasMirrorModel("style-fast-nc16");
let context: WorkerContext;

beforeAll(async () => {
  if (!available) return;
  const modelsDir = await installedModelsDir(["candy-lite", "udnie"]);
  context = createWorkerContext(loadConfig({ ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
});
afterAll(async () => {
  await context?.runtime.dispose();
});

// 100000x1 is reduced to 1024x1 by the working size, the thinnest case the networks see.
const SIZES: [number, number][] = [[1, 1], [4, 4], [64, 4], [5, 3], [2048, 8], [100000, 1]];

describe.skipIf(!available)("finding 2: style transfer on thin images", () => {
  for (const style of ["candy-lite", "udnie"]) {
    for (const [width, height] of SIZES) {
      it(`${style} paints ${width}x${height} at its own size`, async () => {
        const source = await gradientPng(width, height);
        const response = await styleTransfer(
          { image: { data: source, mimeType: "", width: 0, height: 0 }, style, strength: undefined, preserveColors: false, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG },
          context,
          DEFAULT_STYLE_SETTINGS,
          new AbortController().signal,
        );
        const painted = await decode(response.image!.data);
        expect([painted.width, painted.height]).toEqual([width, height]);
      });
    }
  }
});
