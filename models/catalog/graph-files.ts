/** The files a model's graphs are read from. */
import type { GraphSource } from "./catalog-types.js";

/** ONNX files, their external data and chunks named by `graphs` (TF.js graphs are converted in memory). */
export function graphFiles(graphs: Record<string, GraphSource>): string[] {
  return Object.values(graphs).flatMap((graph) =>
    "onnx" in graph ? [graph.onnx, ...(graph.externalData ?? [])] : "chunks" in graph ? graph.chunks : [],
  );
}
