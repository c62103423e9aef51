import { z } from "zod";
import { LIMITS } from "../../core/limits.js";
import { boundedInteger, imageUrlField, modelIdField, outputFormatField, requestBody } from "../schemas/field-schemas.js";
import { imageEnvelope } from "../schemas/response-schemas.js";
import { envelope, loadSourceImage, toImageResult, toProtoFormat } from "./image-io.js";
import { meteredProcedure } from "./procedure-bases.js";

export const upscaleInput = requestBody({
  imageUrl: imageUrlField,
  scale: boundedInteger("scale", LIMITS.upscaleScale)
    .default(2)
    .meta({ description: `Enlargement factor for both sides, ${LIMITS.upscaleScale.min} to ${LIMITS.upscaleScale.max} (default 2). The output must stay within the server's pixel limit (16.8 MP by default).` }),
  model: modelIdField(
    "Upscale model id from `GET /api/v1/models` (beyond the spec): lanczos, esrgan-slim, esrgan-medium, esrgan-thick, lsdir-compact-x4, espcn-x3. " +
      "Default: the best installed model for the scale (x2 to x5: lsdir-compact-x4, espcn-x3, then up to x4 esrgan-medium, esrgan-slim; " +
      "x6 to x8: esrgan-thick, lsdir-compact-x4, espcn-x3 up to x6; lanczos when none is installed and for images under 32 px on a side). " +
      "An unknown id or a scale the model cannot reach is a 400; a model that is not installed a 503 naming the install command.",
  ).optional(),
  outputFormat: outputFormatField,
});

export const upscaleOutput = z.object({
  ...imageEnvelope,
  scale: z.int().meta({ description: "Factor applied." }),
  nativeScale: z.int().meta({
    description:
      "Factor the model produced before any final resample. A scale the model has no network for is reached from its smallest larger " +
      "native factor followed by a Lanczos-3 reduction, else from its largest smaller one followed by a Lanczos-3 enlargement (at most 2x).",
  }),
  steps: z.array(z.string()).meta({
    description: "What was done, in order, e.g. `lanczos3 x4`, or `esrgan-slim x8`, `lanczos3 to x6`, `alpha: lanczos3 x6`.",
  }),
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
