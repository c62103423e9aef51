/** The response shapes every image operation shares. */
import { z } from "zod";

/** What `outputFormat` can produce. */
export const OUTPUT_MIME_TYPES = ["image/png", "image/jpeg", "image/webp"] as const;
export type OutputMimeType = (typeof OUTPUT_MIME_TYPES)[number];

export const imageResultSchema = z.object({
  url: z.string().meta({ description: "The image as a `data:` URL; can be passed back as `imageUrl`." }),
  mimeType: z.enum(OUTPUT_MIME_TYPES).meta({ description: "Media type of the image, as chosen by `outputFormat`." }),
  width: z.int().meta({ description: "Width in pixels." }),
  height: z.int().meta({ description: "Height in pixels." }),
});

export const operationEnvelope = {
  id: z.string().meta({ description: "The request id, also sent as `X-Request-Id`." }),
  created: z.int().meta({ description: "Unix time in seconds when the response was made." }),
  model: z.string().meta({ description: "Catalog id of the model that produced the result." }),
};

export const imageEnvelope = {
  ...operationEnvelope,
  data: z.array(imageResultSchema).meta({ description: "The produced image(s)." }),
};
