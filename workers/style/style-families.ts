/**
 * What differs between the style-network families, beyond what the catalog records (tensor names,
 * layout, value range, size multiple): how the installed graph is prepared before it loads, and what
 * a run costs in memory. Keyed by the catalog's `details.family`.
 */
import { AtelierError } from "../../core/errors.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { makeStyleGraphSizeIndependent } from "./dynamic-style-graph.js";

export interface StyleFamily {
  /** Rewrites the installed ONNX graph before the runtime loads it; absent means load it as is. */
  prepareGraph?: (bytes: Uint8Array) => Uint8Array;
  /**
   * Activation memory a session keeps per pixel of its largest tile (onnxruntime's arena holds on to
   * it between runs), in bytes; measured with `bench/style-transfer.ts` on onnxruntime-node 1.30.
   */
  bytesPerTilePixel: number;
  /**
   * Pixels of mirrored picture painted around the image and cut off afterwards, so a frame the network
   * paints at its zero-padded edges falls outside the result (edge-margin.ts); 0 for none.
   */
  edgeMargin: number;
  /**
   * Smallest side, in pixels, the network can run on: its reflection padding needs more pixels than
   * it pads on every axis of every layer. Thinner (framed) images are extended by edge repetition to
   * this and cropped back (edge-margin.ts), so every image size the service accepts can be painted.
   */
  minimumSide: number;
}

export const STYLE_FAMILIES: Readonly<Record<string, StyleFamily>> = {
  // 32-channel Johnson network converted from the ml5 checkpoints at install: any multiple of 4. Its
  // zero-padded convolutions paint a frame up to about 45 px wide (matilde-perez; the TF "SAME" padding
  // of the strided layers makes it widest on the right and bottom). With 48 px of margin the outer
  // 12 px of every ml5 style come within 6/255 on average of a 128 px margin; with 32 px matilde-perez
  // still shows a 44/255 band (bench/style-transfer.ts, "Edge margin").
  "fast-style-ml5": { bytesPerTilePixel: 900, edgeMargin: 48, minimumSide: 1 },
  // 16-channel PyTorch-example network exported at a fixed 256x256 for ONNX.js; made size-independent
  // at load (dynamic-style-graph.ts) so it paints at the working size like the ml5 styles.
  // It pads by reflection inside the graph, so its edges need no margin; that padding (4 px before
  // the first layer, 1 px in the residual blocks at a quarter of the size) fails on sides below
  // 5 px and 8 px: 16 leaves room.
  "fast-style-nc16": { prepareGraph: (bytes) => makeStyleGraphSizeIndependent(bytes).bytes, bytesPerTilePixel: 600, edgeMargin: 0, minimumSide: 16 },
};

/** The family of a style record; INTERNAL when the catalog names none this module knows. */
export function styleFamily(entry: CatalogEntry): StyleFamily {
  const name = entry.details?.family;
  const family = typeof name === "string" ? STYLE_FAMILIES[name] : undefined;
  if (!family) throw new AtelierError("INTERNAL", `The style "${entry.id}" names no known network family (${String(name)}).`);
  return family;
}
