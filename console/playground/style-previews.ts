/**
 * A thumbnail of each installed style for the playground's style picker: the service paints its
 * own reference photo (style-reference.jpg, Chelsea the cat from scikit-image's sample data, CC0,
 * at thumbnail size, so the work and its memory stay small) in the style once, through the style
 * worker, and keeps the JPEG in the data folder, so later pages and restarts cost nothing. The file
 * is named by what it depends on: the style's id and the SHA-256 of its pinned weights and of the
 * reference photo (`<ATELIER_DATA_DIR>/style-previews/<style>-<key>.jpg`); other weights or another
 * photo make a new one. Each thumbnail is its own image request (the page shows a placeholder
 * until it loads), and rendering is background work: one preview at a time, queued in the worker
 * behind every real call (core/work-priority.ts). The work is the service's own, charged to no
 * key; concurrent requests for one style share one render.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Request, Response } from "express";
import PQueue from "p-queue";
import { inBackground } from "../../core/work-priority.js";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import type { AtelierServices } from "../../server/context.js";

/** The photo every preview paints; also shown beside them as the original. */
export const STYLE_REFERENCE_FILE = fileURLToPath(new URL("./style-reference.jpg", import.meta.url));
const STYLE_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** Hex digits of the key in a preview's file name. */
const KEY_LENGTH = 16;

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/**
 * What a preview of `style` depends on, as hex: the style id, the SHA-256 of each of its weight
 * files as the catalog pins them (the installer holds every file to its pin), and of the reference
 * photo. Undefined for an id that is not a catalogued style.
 */
export function previewKey(style: string, referenceSha256: string): string | undefined {
  const entry = catalogEntry(style);
  if (!entry || entry.task !== "style-transfer") return undefined;
  const weights = "files" in entry.source ? entry.source.files.map((file) => `${file.name}:${file.sha256}`).sort() : [];
  return sha256(JSON.stringify([entry.id, weights, referenceSha256])).slice(0, KEY_LENGTH);
}

export class StylePreviews {
  private readonly rendering = new Map<string, Promise<Buffer>>();
  /** One preview renders at a time, however many a page asks for. */
  private readonly renders = new PQueue({ concurrency: 1 });
  private readonly reference = readFileSync(STYLE_REFERENCE_FILE);
  private readonly referenceSha256 = sha256(this.reference);

  constructor(private readonly services: AtelierServices) {}

  private get folder(): string {
    return path.join(this.services.config.dataDir, "style-previews");
  }

  /** The preview's file, or undefined for an id that is not a catalogued style. */
  fileOf(style: string): string | undefined {
    const key = previewKey(style, this.referenceSha256);
    return key && path.join(this.folder, `${style}-${key}.jpg`);
  }

  /** The preview's JPEG bytes, rendered on first use; rejects when the style cannot run (not installed, unknown). */
  async preview(style: string): Promise<Buffer> {
    const file = this.fileOf(style);
    if (!file) throw new Error(`${style} is not a catalogued style`);
    const cached = await fs.readFile(file).catch(() => null);
    if (cached) return cached;
    let render = this.rendering.get(style);
    if (!render) {
      render = this.renders.add(() => this.render(style, file), { throwOnTimeout: true }).finally(() => this.rendering.delete(style));
      this.rendering.set(style, render);
    }
    return render;
  }

  private async render(style: string, file: string): Promise<Buffer> {
    const image = { data: this.reference, mimeType: "image/jpeg", width: 0, height: 0 };
    const result = await inBackground(() => this.services.workers.styleTransfer({ image, style, preserveColors: false, outputFormat: OutputFormat.OUTPUT_FORMAT_JPEG }));
    if (!result.image) throw new Error(`the style worker returned no image for ${style}`);
    await fs.mkdir(this.folder, { recursive: true });
    // Written aside and renamed, so a reader never sees half a file.
    const partial = `${file}.${process.pid}.partial`;
    await fs.writeFile(partial, result.image.data);
    await fs.rename(partial, file);
    // Previews of the style's earlier weights or reference photo are never asked for again.
    const earlier = new RegExp(`^${style}-[0-9a-f]{${KEY_LENGTH}}\\.jpg$`);
    for (const name of await fs.readdir(this.folder)) {
      if (earlier.test(name) && path.join(this.folder, name) !== file) await fs.rm(path.join(this.folder, name), { force: true });
    }
    return result.image.data;
  }

  /** GET handler for `/playground/styles/:style.jpg`: the preview, or 404 when there is none to give. */
  handler() {
    return (req: Request, res: Response): void => {
      const style = String(req.params.style ?? "");
      if (!STYLE_ID.test(style)) {
        res.status(404).type("text/plain").send("No such style.");
        return;
      }
      this.preview(style).then(
        (bytes) => {
          res.setHeader("Cache-Control", "private, max-age=86400");
          res.type("image/jpeg").send(bytes);
        },
        (error: unknown) => {
          this.services.logger.info({ part: "console", style, err: error }, "no style preview");
          res.status(404).type("text/plain").send("There is no preview of this style: it is not installed.");
        },
      );
    };
  }
}
