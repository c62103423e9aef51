/**
 * Turns a parsed replacement into what the background worker takes. The router composes workers
 * here: an image URL is fetched with the same safe fetcher as `imageUrl`, and a description is drawn
 * by the text-to-image worker, at the source's size, by a generation model marked `photographic` in
 * the catalog; either way the background worker receives bytes, never a URL or a prompt.
 */
import { AtelierError, modelNotInstalled } from "../../core/errors.js";
import type { RemoveBackgroundRequest } from "../../gen/atelier/background/v1/background_service.js";
import { ModelTask, type ModelRecord } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { OutputFormat, type Image } from "../../gen/atelier/image/v1/image.js";
import type { RequestContext } from "../context.js";
import { describeReplacement, type Replacement } from "../../contract/parse-replacement.js";

/** What the generated background should not show: the subject goes in front of it. */
export const BACKGROUND_NEGATIVE_PROMPT = "people, person, text, watermark, frame";

export interface ResolvedReplacement {
  /** The `replacement` oneof of the worker request. */
  field: RemoveBackgroundRequest["replacement"];
  /** How the text was understood, for the response (`color:#ffffff`, `image`, `blur`, `generated:<model>`, `none`). */
  understood: string;
}

/**
 * The generation model that may draw a background: installed, enabled and photographic. Throws
 * MODEL_NOT_INSTALLED naming what to install when there is none, before any image is fetched.
 */
export async function photographicGenerator(ctx: RequestContext): Promise<ModelRecord> {
  const { models } = await ctx.services.workers.listModels({ task: ModelTask.MODEL_TASK_GENERATE }, { signal: ctx.signal });
  const photographic = models.filter((model) => model.photographic);
  const usable = photographic.find((model) => model.installed && !model.disabled);
  if (usable) return usable;
  const known = photographic.filter((model) => !model.disabled && model.installCommand !== "");
  const [first, ...others] = known;
  throw modelNotInstalled(
    "Replacing the background with a described scene needs a photographic text-to-image model (`photographic: true` in GET /api/v1/models), " +
      "and none is installed on this server. Colours, image URLs and `blur` work without it.",
    {
      install: [
        first
          ? { id: first.id, installCommand: first.installCommand, ...(others.length > 0 ? { note: `also photographic: ${others.map((model) => model.id).join(", ")}` } : {}) }
          : { id: "", installCommand: "npm run models -- pull <id>" },
      ],
      lead: "An operator installs one, such as a Stable Diffusion export:",
      issues: [{ path: "replacement", message: "No photographic text-to-image model is installed." }],
    },
  );
}

/**
 * Size to ask the generator for: the source's size, scaled down (aspect kept) into the model's
 * bounds and rounded to its size multiple. The worker cover-fits whatever comes back.
 */
export function generationSize(source: { width: number; height: number } | undefined, model: ModelRecord): { width: number; height: number } {
  const limits = model.generation;
  if (!limits) return { width: 0, height: 0 };
  if (!source) return { width: limits.defaultWidth, height: limits.defaultHeight };
  const fit = Math.min(1, limits.maxWidth / source.width, limits.maxHeight / source.height);
  const multiple = Math.max(1, limits.sizeMultiple);
  const side = (value: number, max: number) => Math.min(max, Math.max(limits.minSize, Math.round((value * fit) / multiple) * multiple));
  return { width: side(source.width, limits.maxWidth), height: side(source.height, limits.maxHeight) };
}

/**
 * The source's oriented size from its header, or undefined if it cannot be read (the worker will say
 * why). sharp is loaded on first use: a router whose workers run elsewhere needs it only here.
 */
async function sizeOf(image: Image): Promise<{ width: number; height: number } | undefined> {
  try {
    const { default: sharp } = await import("sharp");
    const metadata = await sharp(image.data, { pages: 1, limitInputPixels: false }).metadata();
    const oriented = metadata.autoOrient ?? metadata;
    return oriented.width && oriented.height ? { width: oriented.width, height: oriented.height } : undefined;
  } catch {
    return undefined;
  }
}

/** Re-words the image fetcher's errors, which speak of `imageUrl`, for the replacement URL. */
function forReplacement(error: unknown): unknown {
  if (!(error instanceof AtelierError) || error.code === "CANCELLED") return error;
  const message = error.message.replaceAll("imageUrl", "the replacement image URL");
  return new AtelierError(error.code, message, { cause: error, issues: [{ path: "replacement", message }] });
}

/**
 * The worker's `replacement` field for `replacement`. `source` is the source image, possibly still
 * being fetched: only a generated background waits for it (for its size), so a replacement image is
 * fetched alongside the source.
 */
export async function resolveReplacement(
  ctx: RequestContext,
  replacement: Replacement,
  source: Promise<Image> | Image,
  generator: ModelRecord | undefined,
): Promise<ResolvedReplacement> {
  const understood = describeReplacement(replacement);
  switch (replacement.kind) {
    case "none":
      return { field: undefined, understood };
    case "color": {
      const { red, green, blue, alpha } = replacement;
      return { field: { $case: "color", value: { red, green, blue, alpha } }, understood };
    }
    case "blur":
      return { field: { $case: "blur", value: { sigma: replacement.sigma ?? 0 } }, understood };
    case "image": {
      const fetched = await ctx.services.images.fetch(replacement.url, ctx.signal, ctx.bodyStringBytes?.(replacement.url)).catch((error: unknown) => {
        throw forReplacement(error);
      });
      return { field: { $case: "imageBackground", value: { data: fetched.bytes, mimeType: fetched.contentType ?? "", width: 0, height: 0 } }, understood };
    }
    case "generate": {
      const model = generator ?? (await photographicGenerator(ctx));
      const { width, height } = generationSize(await sizeOf(await source), model);
      const generated = await ctx.services.workers.generate(
        {
          prompt: replacement.description,
          width,
          height,
          model: model.id,
          negativePrompt: BACKGROUND_NEGATIVE_PROMPT,
          steps: 0,
          scheduler: "",
          outputFormat: OutputFormat.OUTPUT_FORMAT_PNG,
        },
        { signal: ctx.signal },
      );
      if (!generated.image) throw new AtelierError("INTERNAL", "The generation worker returned no image.");
      return { field: { $case: "imageBackground", value: generated.image }, understood: describeReplacement(replacement, generated.model) };
    }
  }
}
