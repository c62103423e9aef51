import { z } from "zod";
import { LIMITS } from "../../core/limits.js";
import { boundedNumber, flag, imageUrlField, outputFormatField, requestBody } from "../schemas/field-schemas.js";
import { imageEnvelope } from "../schemas/response-schemas.js";
import { envelope, loadSourceImage, toImageResult, toProtoFormat } from "./image-io.js";
import { meteredProcedure } from "./procedure-bases.js";

export const styleTransferInput = requestBody({
  imageUrl: imageUrlField,
  style: z
    .string({ error: "Expected a style id (see GET /api/v1/models) for style" })
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, { error: "Expected a style id (lower-case letters, digits, hyphens; see GET /api/v1/models) for style" })
    .meta({
      description:
        "Style id: one of the `style-transfer` records of `GET /api/v1/models` (`la-muse`, `mathura`, `matilde-perez`, `matta`, `rain-princess`, `scream`, `udnie`, `wave`, `wreck`, `candy-lite`, `mosaic-lite`, `rain-princess-lite`, `udnie-lite`). " +
        "An unknown id answers 400 listing them; a style not installed, or disabled for its non-commercial licence (ATELIER_DISABLE_NON_COMMERCIAL), answers 503.",
      example: "udnie",
    }),
  strength: boundedNumber("strength", LIMITS.styleStrength)
    .default(1)
    .meta({ description: "How much of the painting shows over the original, 0 (the original unchanged) to 1 (full style), mixed per pixel at full resolution (beyond the spec; default 1)." }),
  preserveColors: flag("preserveColors")
    .default(false)
    .meta({
      description:
        "Keep the original colours and transfer only texture and shading: the result takes its chroma (YCbCr Cb and Cr) from the original and its luma from the painting, matched to the original's mean brightness and contrast (beyond the spec; default false).",
    }),
  outputFormat: outputFormatField,
});

export const styleTransferOutput = z.object({
  ...imageEnvelope,
  style: z.string().meta({ description: "The style applied." }),
});

export const styleTransferProcedure = meteredProcedure
  .meta({
    openapi: {
      method: "POST",
      path: "/v1/tools/style-transfer",
      protect: true,
      tags: ["tools"],
      summary: "Apply an artistic style to an image",
      description:
        "Repaints the image at `imageUrl` in `style` and returns it at the source's size. The networks paint strokes of a fixed size in pixels, so the style is applied at a working resolution " +
        "(longest side ATELIER_STYLE_WORKING_SIZE, default 1024 px; smaller images at their own size) and the painting is resized back with Lanczos3. Transparency is kept exactly; grey images come back in colour.",
    },
  })
  .input(styleTransferInput)
  .output(styleTransferOutput)
  .mutation(async ({ input, ctx }) => {
    const image = await loadSourceImage(ctx, input.imageUrl);
    const result = await ctx.services.workers.styleTransfer(
      {
        image,
        style: input.style,
        strength: input.strength,
        preserveColors: input.preserveColors,
        outputFormat: toProtoFormat(input.outputFormat),
      },
      { signal: ctx.signal },
    );
    return { ...envelope(ctx, result.model), data: [toImageResult(result.image)], style: result.style };
  });
