import { z } from "zod";
import { boundedInteger, imageUrlField, modelIdField, outputFormatField, requestBody } from "../schemas/field-schemas.js";
import { imageEnvelope } from "../schemas/response-schemas.js";
import { envelope, loadSourceImage, toImageResult, toProtoFormat } from "./image-io.js";
import { meteredProcedure } from "./procedure-bases.js";

export const upscaleInput = requestBody({
  imageUrl: imageUrlField,
  scale: boundedInteger("scale", 2, 8)
    .default(2)
    .meta({ description: "Enlargement factor for both sides, 2 to 8 (default 2). The output must stay within the server's pixel limit (16.8 MP by default)." }),
  model: modelIdField("Upscale model id from `GET /api/v1/models` (beyond the spec). Default: the best installed model for the scale.").optional(),
  outputFormat: outputFormatField,
});

export const upscaleOutput = z.object({
  ...imageEnvelope,
  scale: z.int().meta({ description: "Factor applied." }),
  nativeScale: z.int().meta({ description: "Factor the model produced before any final resample." }),
  steps: z.array(z.string()).meta({ description: "What was done, e.g. `lanczos3 x4`." }),
});

export const upscaleProcedure = meteredProcedure
  .meta({
    openapi: {
      method: "POST",
      path: "/v1/tools/upscale",
      protect: true,
      tags: ["tools"],
      summary: "Upscale an image",
      description: "Enlarges the image at `imageUrl` by `scale` on both sides and returns it as a data URL.",
    },
  })
  .input(upscaleInput)
  .output(upscaleOutput)
  .mutation(async ({ input, ctx }) => {
    const image = await loadSourceImage(ctx, input.imageUrl);
    const result = await ctx.services.workers.upscale(
      { image, scale: input.scale, model: input.model ?? "", outputFormat: toProtoFormat(input.outputFormat) },
      { signal: ctx.signal },
    );
    return {
      ...envelope(ctx, result.model),
      data: [toImageResult(result.image)],
      scale: result.scale,
      nativeScale: result.nativeScale,
      steps: result.steps,
    };
  });
