/**
 * A thumbnail of each installed style for the playground's style picker: the service paints its
 * own reference photo (style-reference.jpg, Chelsea the cat from scikit-image's sample data, CC0)
 * in the style once, through the style worker, and keeps the JPEG in the data folder
 * (`<ATELIER_DATA_DIR>/style-previews/<style>.jpg`), so later pages cost nothing. The work is the
 * service's own, charged to no key; concurrent requests for one style share one render.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Request, Response } from "express";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import type { AtelierServices } from "../../server/context.js";

/** The photo every preview paints; also shown beside them as the original. */
export const STYLE_REFERENCE_FILE = fileURLToPath(new URL("./style-reference.jpg", import.meta.url));
const STYLE_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;

export class StylePreviews {
  private readonly rendering = new Map<string, Promise<Buffer>>();

  constructor(private readonly services: AtelierServices) {}

  private fileOf(style: string): string {
    return path.join(this.services.config.dataDir, "style-previews", `${style}.jpg`);
  }

  /** The preview's JPEG bytes, rendered on first use; rejects when the style cannot run (not installed, unknown). */
  async preview(style: string): Promise<Buffer> {
    const file = this.fileOf(style);
    const cached = await fs.readFile(file).catch(() => null);
    if (cached) return cached;
    let render = this.rendering.get(style);
    if (!render) {
      render = this.render(style, file).finally(() => this.rendering.delete(style));
      this.rendering.set(style, render);
    }
    return render;
  }

  private async render(style: string, file: string): Promise<Buffer> {
    const image = { data: await fs.readFile(STYLE_REFERENCE_FILE), mimeType: "image/jpeg", width: 0, height: 0 };
    const result = await this.services.workers.styleTransfer({ image, style, preserveColors: false, outputFormat: OutputFormat.OUTPUT_FORMAT_JPEG });
    if (!result.image) throw new Error(`the style worker returned no image for ${style}`);
    await fs.mkdir(path.dirname(file), { recursive: true });
    // Written aside and renamed, so a reader never sees half a file.
    const partial = `${file}.${process.pid}.partial`;
    await fs.writeFile(partial, result.image.data);
    await fs.rename(partial, file);
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
