import { z } from "zod";
import { boundedNumber, flag, imageUrlField, outputFormatField, requestBody } from "../schemas/field-schemas.js";
import { imageEnvelope } from "../schemas/response-schemas.js";
import { envelope, loadSourceImage, toImageResult, toProtoFormat } from "./image-io.js";
import { meteredProcedure } from "./procedure-bases.js";

export const styleTransferInput = requestBody({
  imageUrl: imageUrlField,
  style: z
    .string({ error: "Expected a style id (see GET /api/v1/models) for style" })
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, { error: "Expected a style id (lower-case letters, digits, hyphens; see GET /api/v1/models) for style" })
    .meta({ description: "Style id: one of the `style-transfer` records of `GET /api/v1/models`.", example: "udnie" }),
  strength: boundedNumber("strength", 0, 1).default(1).meta({ description: "Blend with the original, 0 to 1 (beyond the spec; default 1, full style)." }),
  preserveColors: flag("preserveColors").default(false).meta({ description: "Keep the original colours, transfer only texture (beyond the spec)." }),
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
      description: "Repaints the image at `imageUrl` in `style` and returns it at the source's size.",
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
