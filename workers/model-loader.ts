/**
 * Turns a catalogued model graph into ONNX bytes for the runtime: an installed ONNX file, chunks
 * joined in order, or a TF.js layers model converted in memory. Weights that ship in npm packages
 * were never checked by an installer, so their files are verified against the pinned sha256 on
 * first load in each process; a model that is not installed (or disabled) fails with a 503 that
 * names the command to install it (or the setting that disabled it).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { AtelierError, modelNotInstalled, type InstallableModel } from "../core/errors.js";
import { arrivingModel, describeArrival } from "../models/store/arriving-models.js";
import type { CatalogEntry, GraphSource } from "../models/catalog/catalog-types.js";
import { sha256OfFile } from "../models/store/fetch-weight-file.js";
import { convertTfjsLayers } from "../models/convert/model-converters.js";
import type { ModelFile } from "./onnx/onnx-runtime.js";
import type { ModelAvailability } from "../models/store/model-availability.js";
import type { ModelStore } from "../models/store/model-store.js";

export class ModelLoader implements ModelAvailability {
  private readonly verified = new Set<string>();

  constructor(
    readonly store: ModelStore,
    private readonly options: { disableNonCommercial: boolean },
  ) {}

  /** Whether the operator disabled this model (non-commercial licence with ATELIER_DISABLE_NON_COMMERCIAL). */
  isDisabled(entry: CatalogEntry): boolean {
    return this.options.disableNonCommercial && entry.nonCommercial;
  }

  /** Usable now: installed and not disabled. */
  isUsable(entry: CatalogEntry): boolean {
    return !this.isDisabled(entry) && this.store.isInstalled(entry);
  }

  /** The entry as a MODEL_NOT_INSTALLED names it, with this server's install command. */
  installable(entry: CatalogEntry, note?: string): InstallableModel {
    return { id: entry.id, installCommand: this.store.installCommand(entry), ...(note ? { note } : {}) };
  }

  /** Throws MODEL_NOT_INSTALLED (503) naming the install command, or the setting that disabled it. */
  assertUsable(entry: CatalogEntry): void {
    if (this.isDisabled(entry)) {
      throw modelNotInstalled(
        `The model "${entry.id}" is disabled on this server because its licence forbids commercial use (ATELIER_DISABLE_NON_COMMERCIAL).`,
      );
    }
    const status = this.store.status(entry);
    const arrival = status.installed ? undefined : arrivingModel(this.store.modelsDir, entry.id);
    if (arrival) throw modelNotInstalled(describeArrival(entry.id, arrival), { retryAfterSeconds: 15 });
    if (!status.installed) {
      throw modelNotInstalled(`The model "${entry.id}" is not installed on this server (${status.reason}).`, { install: [this.installable(entry)] });
    }
  }

  /** Key under which the runtime caches this graph's session. */
  sessionKey(entry: CatalogEntry, graph: string): string {
    return `${entry.id}/${graph}`;
  }

  /** A loader for the runtime: resolves the graph's bytes when the session is first created. */
  graphLoader(entry: CatalogEntry, graph: string): () => Promise<Uint8Array> {
    return async () => {
      this.assertUsable(entry);
      const source = entry.graphs[graph];
      if (!source) throw new AtelierError("INTERNAL", `The model "${entry.id}" has no graph "${graph}".`);
      await this.verifyShippedFiles(entry, source);
      return this.readGraph(entry, source);
    };
  }

  /**
   * Like {@link graphLoader}, but a graph whose weights live in external data files is handed to the
   * runtime by path (onnxruntime finds the data files next to it) instead of as bytes.
   */
  graphFileLoader(entry: CatalogEntry, graph: string): () => Promise<Uint8Array | ModelFile> {
    const bytes = this.graphLoader(entry, graph);
    return async () => {
      const source = entry.graphs[graph];
      if (!source || !("onnx" in source) || !source.externalData?.length) return bytes();
      this.assertUsable(entry);
      const files = [source.onnx, ...source.externalData].map((name) => this.store.filePath(entry, name));
      const sizes = await Promise.all(files.map(async (file) => (await fs.stat(file)).size));
      return { path: files[0]!, bytes: sizes.reduce((sum, size) => sum + size, 0) };
    };
  }

  private async readGraph(entry: CatalogEntry, source: GraphSource): Promise<Uint8Array> {
    if ("onnx" in source) return fs.readFile(this.store.filePath(entry, source.onnx));
    if ("chunks" in source) return Buffer.concat(await Promise.all(source.chunks.map((chunk) => fs.readFile(this.store.filePath(entry, chunk)))));
    const modelJson = this.store.filePath(entry, `${source.tfjsLayers}/model.json`);
    return convertTfjsLayers(path.dirname(modelJson));
  }

  /** Files of npm-shipped and bundled models a graph reads (read in place, never verified at install), hashed once per process. */
  private async verifyShippedFiles(entry: CatalogEntry, source: GraphSource): Promise<void> {
    if (entry.source.kind !== "npm" && entry.source.kind !== "bundled") return;
    const prefix = "tfjsLayers" in source ? `${source.tfjsLayers}/` : undefined;
    const names = "onnx" in source ? [source.onnx] : "chunks" in source ? source.chunks : undefined;
    const files = entry.source.files.filter((file) => (prefix ? file.name.startsWith(prefix) : names?.includes(file.name)));
    for (const file of files) {
      const key = `${entry.id}/${file.name}`;
      if (this.verified.has(key)) continue;
      const digest = await sha256OfFile(this.store.filePath(entry, file.name));
      if (digest !== file.sha256) {
        throw modelNotInstalled(`The weights of "${entry.id}" are damaged (${file.name} fails its checksum).`, {
          install: [this.installable(entry)],
          lead: "An operator reinstalls them with",
          cause: new Error(`sha256 ${digest}, expected ${file.sha256}`),
        });
      }
      this.verified.add(key);
    }
  }
}
