import { z } from "zod";
import { boundedText, flag, imageUrlField, modelIdField, outputFormatField, requestBody } from "../schemas/field-schemas.js";
import { imageEnvelope } from "../schemas/response-schemas.js";
import { envelope, loadSourceImage, toImageResult, toProtoFormat } from "./image-io.js";
import { meteredProcedure } from "./procedure-bases.js";

export const backgroundRemoveInput = requestBody({
  imageUrl: imageUrlField,
  replacement: boundedText("replacement", 0, 2000)
    .optional()
    .meta({
      description:
        "What goes behind the subject. Empty or absent: transparent cutout. A CSS colour (`white`, `#00ff00`, `rgb(...)`), " +
        "an image URL, `blur`, or a description of a scene to generate.",
    }),
  model: modelIdField("Segmentation model id from `GET /api/v1/models` (beyond the spec). Default: the best installed general model.").optional(),
  onlyMask: flag("onlyMask").default(false).meta({ description: "Return the matte as a grayscale image (beyond the spec)." }),
  outputFormat: outputFormatField,
});

export const backgroundRemoveOutput = z.object({
  ...imageEnvelope,
  replacement: z.string().optional().meta({ description: "How `replacement` was understood." }),
});

export const backgroundRemoveProcedure = meteredProcedure
  .meta({
    openapi: {
      method: "POST",
      path: "/v1/tools/background-remove",
      protect: true,
      tags: ["tools"],
      summary: "Remove or replace the background of an image",
      description: "Separates the subject of the image at `imageUrl` from its background and removes or replaces the background.",
    },
  })
  .input(backgroundRemoveInput)
  .output(backgroundRemoveOutput)
  .mutation(async ({ input, ctx }) => {
    const image = await loadSourceImage(ctx, input.imageUrl);
    const result = await ctx.services.workers.removeBackground(
      { image, model: input.model ?? "", onlyMask: input.onlyMask, outputFormat: toProtoFormat(input.outputFormat) },
      { signal: ctx.signal },
    );
    return { ...envelope(ctx, result.model), data: [toImageResult(result.image)] };
  });
