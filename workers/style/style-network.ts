/**
 * Paints an RGB image with one style network: the session comes from the shared runtime (loaded once,
 * kept while the image's tiles run), the image, with a mirrored margin where the family needs one,
 * goes through it in balanced, blended tiles.
 */
import { AtelierError } from "../../core/errors.js";
import type { CatalogEntry, InferenceGeometry } from "../../models/catalog/catalog-types.js";
import type { RawImage } from "../image/raw-image.js";
import { runImageNetwork } from "../image/image-network.js";
import { sessionSettings } from "../onnx/session-settings.js";
import type { WorkerContext } from "../worker-context.js";
import { addReflectedMargin, cropTo, extendToMinimum, removeMargin } from "./edge-margin.js";
import { styleFamily } from "./style-families.js";
import type { StyleSettings } from "./style-settings.js";
import { balancedTiling, type Size } from "./working-size.js";

export type StyleNetworkDependencies = Pick<WorkerContext, "runtime" | "models">;

const GRAPH = "default";

/** What one painting did, for logs and the bench. */
export interface PaintReport {
  /** Network runs (tiles). */
  tiles: number;
  /** Milliseconds inside the network runs, loading excluded. */
  runMs: number;
}

/**
 * How an image of `size` is painted: the mirrored margin added on every side, and the tiling of the
 * framed image. The tile limit counts picture pixels; the margin comes on top of it.
 */
export function paintingPlan(size: Size, entry: CatalogEntry, settings: StyleSettings): { margin: number; tiling: InferenceGeometry } {
  const margin = styleFamily(entry).edgeMargin;
  const framed = { width: size.width + 2 * margin, height: size.height + 2 * margin };
  return { margin, tiling: balancedTiling(framed, entry.geometry ?? {}, settings.tileSize + 2 * margin) };
}

/** Longest side, in picture pixels, of the largest tile one run paints: larger images are reduced to the working size first. */
export function largestTileSide(settings: StyleSettings): number {
  return Math.min(settings.tileSize, settings.workingSize);
}

/**
 * The activation memory a style's session is charged for. The session outlives any one image: this
 * counts the largest tile any request can bring (images beyond the working size are reduced to it
 * first), so the memory budget holds whatever comes next.
 */
export function styleWorkingBytes(entry: CatalogEntry, settings: StyleSettings): number {
  const family = styleFamily(entry);
  const largestTile = largestTileSide(settings) + 2 * family.edgeMargin + (entry.geometry?.sizeMultiple ?? 1);
  return largestTile * largestTile * family.bytesPerTilePixel;
}

/**
 * `image` (RGB, any size) painted by the style `entry`, same size. `settings.tileSize` bounds one
 * run's longest side; larger images are painted in tiles that overlap by the catalog's `tileOverlap`.
 */
export async function paintWithStyle(
  image: RawImage,
  entry: CatalogEntry,
  deps: StyleNetworkDependencies,
  settings: StyleSettings,
  signal?: AbortSignal,
): Promise<{ image: RawImage; report: PaintReport }> {
  const { imageFormat, geometry, signature } = entry;
  const input = signature?.inputs[0]?.name;
  const output = signature?.outputs[0]?.name;
  if (!imageFormat || !geometry || !input || !output) {
    throw new AtelierError("INTERNAL", `The style "${entry.id}" has no image format, geometry or tensor names in the catalog.`);
  }
  const family = styleFamily(entry);
  const load = deps.models.graphLoader(entry, GRAPH);
  const { margin, tiling } = paintingPlan(image, entry, settings);
  const mirrored = addReflectedMargin(image, margin);
  const framed = extendToMinimum(mirrored, family.minimumSide);
  const prepared = async () => (family.prepareGraph ? family.prepareGraph(await load()) : load());
  const options = { workingBytes: styleWorkingBytes(entry, settings), session: sessionSettings(entry) };
  const report: PaintReport = { tiles: 0, runMs: 0 };
  const timed = async <T>(run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await run();
    report.runMs += performance.now() - started;
    report.tiles++;
    return result;
  };
  const painted = await runImageNetwork(
    framed,
    deps.runtime,
    {
      label: `style "${entry.id}"`,
      key: deps.models.sessionKey(entry, GRAPH),
      load: prepared,
      options,
      format: imageFormat,
      input,
      output,
    },
    { scale: 1, geometry: tiling, signal, aroundRun: timed },
  );
  return { image: removeMargin(cropTo(painted, mirrored.width, mirrored.height), margin), report };
}
