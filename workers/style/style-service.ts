/**
 * gRPC StyleTransferService: repaints a photo in a catalogued style and returns it at the photo's size.
 *
 * The pipeline, in order (one file per step):
 * 1. check the request (models/requests/style-request.ts): unknown style 400, style not usable here 503;
 * 2. decode with the byte and pixel caps, orientation applied, as 8-bit sRGB (core/open-image.ts);
 * 3. take alpha off (image/alpha.ts); it goes back unchanged at the end, never through a network;
 * 4. reduce to the working size (working-size.ts, resample.ts), because the networks' strokes have a
 *    fixed size in pixels;
 * 5. paint, inside a mirrored margin where the network would paint a frame (edge-margin.ts), in
 *    balanced, blended tiles (style-network.ts);
 * 6. enlarge the painting back to the photo's size (resample.ts);
 * 7. optionally keep the photo's colours (preserve-colors.ts) and mix with the photo (blend-strength.ts),
 *    both at full resolution, so the photo's own detail is what shows through;
 * 8. put alpha back and encode (image/encode-image.ts).
 * Steps 2 to 8 run inside the worker's queue, so memory-heavy work is bounded like every inference.
 */
import {
  StyleTransferServiceService,
  type StyleTransferRequest,
  type StyleTransferResponse,
} from "../../gen/atelier/style/v1/style_transfer_service.js";
import { unaryHandler } from "../grpc-handler.js";
import { splitAlpha } from "../image/alpha.js";
import { encodeImage } from "../image/encode-image.js";
import { assertOutputSize, SMALLER_IMAGE_HINT } from "../../core/image-limits.js";
import { openImage } from "../../core/open-image.js";
import { readRawImage, type RawImage } from "../image/raw-image.js";
import type { WorkerContext } from "../worker-context.js";
import { blendWithOriginal } from "./blend-strength.js";
import { keepOriginalColors } from "./preserve-colors.js";
import { resizeImage } from "./working-size-resize.js";
import { checkStyleRequest, type StyleJob } from "../../models/requests/style-request.js";
import { paintWithStyle, type PaintReport } from "./style-network.js";
import type { StyleSettings } from "./style-settings.js";
import { workingSizeFor, type Size } from "./working-size.js";

export type StyleDependencies = Pick<WorkerContext, "config" | "limits" | "queue" | "logger" | "runtime" | "models">;

/** What one restyling did, beyond the image: for logs, tests and the bench. */
export interface StyleTrace {
  /** The size the style was painted at. */
  working: Size;
  /** Network runs and time; undefined when strength 0 skipped the network. */
  paint: PaintReport | undefined;
}

/**
 * Repaints the decoded `rgb` (3 channels) with the job's style and options; same size back. Exported
 * for the bench and tests, which compare it with bare sessions.
 */
export async function restyle(
  rgb: RawImage,
  job: Omit<StyleJob, "imageBytes">,
  deps: Pick<StyleDependencies, "runtime" | "models">,
  settings: StyleSettings,
  signal?: AbortSignal,
): Promise<{ image: RawImage; trace: StyleTrace }> {
  const working = workingSizeFor(rgb, settings.workingSize);
  // Strength 0 is the original exactly; the network would only be thrown away.
  if (job.strength === 0) return { image: rgb, trace: { working, paint: undefined } };
  const reduced = await resizeImage(rgb, working);
  const painted = await paintWithStyle(reduced, job.entry, deps, settings, signal);
  let result = await resizeImage(painted.image, rgb);
  if (job.preserveColors) result = keepOriginalColors(rgb, result);
  result = blendWithOriginal(rgb, result, job.strength);
  return { image: result, trace: { working, paint: painted.report } };
}

export async function styleTransfer(
  request: StyleTransferRequest,
  deps: StyleDependencies,
  settings: StyleSettings,
  signal: AbortSignal,
): Promise<StyleTransferResponse> {
  const job = checkStyleRequest(request, deps.models);
  const opened = await openImage(job.imageBytes, deps.limits);
  const { width, height } = opened.info;
  assertOutputSize(width, height, deps.limits, SMALLER_IMAGE_HINT);
  const image = await deps.queue.run(async () => {
    const started = performance.now();
    const decoded = await readRawImage(opened.pipeline().toColourspace("srgb"));
    const { rgb, alpha } = splitAlpha(decoded);
    const decodedAt = performance.now();
    const { image: painted, trace } = await restyle(rgb, job, deps, settings, signal);
    const paintedAt = performance.now();
    // The alpha plane as it came, joined by the encoder (PNG: row by row as it filters, in parallel bands).
    const encoded = await encodeImage({ colour: painted, alpha }, request.outputFormat);
    // Each step's wall time, so a slow call shows where it went (the network runs are runMs of paintMs).
    deps.logger.debug(
      {
        style: job.entry.id,
        size: `${width}x${height}`,
        working: `${trace.working.width}x${trace.working.height}`,
        tiles: trace.paint?.tiles ?? 0,
        decodeMs: Math.round(decodedAt - started),
        paintMs: Math.round(paintedAt - decodedAt),
        runMs: Math.round(trace.paint?.runMs ?? 0),
        encodeMs: Math.round(performance.now() - paintedAt),
      },
      "style applied",
    );
    return encoded;
  }, signal);
  return { image, style: job.entry.id, model: job.entry.id };
}

/** The service for a worker; style settings come from the configuration unless given. */
export function styleTransferServiceImplementation(deps: StyleDependencies, settings: StyleSettings = deps.config.style) {
  return {
    definition: StyleTransferServiceService,
    implementation: {
      styleTransfer: unaryHandler<StyleTransferRequest, StyleTransferResponse>(deps.logger, "StyleTransfer", (request, signal) =>
        styleTransfer(request, deps, settings, signal),
      ),
    },
  };
}
