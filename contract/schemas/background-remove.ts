/** The request and answer of `POST /v1/tools/background-remove`, and its documented examples. */
import { z } from "zod";
import { defaultOf } from "../../core/config.js";
import { LIMITS } from "../../core/limits.js";
import { replacementText } from "../parse-replacement.js";
import { flag, imageUrlField, modelIdField, outputFormatField, requestBody } from "../field-schemas.js";
import { imageEnvelope } from "../response-schemas.js";
import { EXAMPLE_IMAGE, EXAMPLE_NOT_AN_IMAGE, EXAMPLE_RESULT_URL, EXAMPLE_OVER_INPUT_LIMIT, EXAMPLE_OVER_OUTPUT_LIMIT } from "../example-images.js";
import { backgroundModelsText } from "../catalog-docs.js";
import type { OperationExamples } from "../operation-examples.js";

export const backgroundRemoveInput = requestBody({
  imageUrl: imageUrlField,
  replacement: replacementText
    .optional()
    .meta({
      description:
        "What goes behind the subject, read in this order. Empty or absent: transparent cutout. " +
        "A CSS colour (`white`, `#00ff00`, `#0f08`, `rgb(0 128 255)`, `hsl(120 100% 25%)`, `transparent`): solid fill. " +
        `An \`http(s)://\` or \`data:image/...\` URL: that image, scaled to cover, under the same rules as \`imageUrl\` (a data URL may be longer than the ${LIMITS.replacementCharacters.max} characters other text is limited to). ` +
        `\`blur\` or \`blur(12px)\` (Gaussian sigma ${LIMITS.blurSigma.min} to ${LIMITS.blurSigma.max} source pixels): the original background blurred. ` +
        "Any other text: a scene described in words, drawn by a photographic text-to-image model (503 when none is installed).",
      example: "white",
    }),
  model: modelIdField(
    `Segmentation model id (beyond the spec), one of the catalog's: ${backgroundModelsText()}. ` +
      "Default: the best installed general model, else a people model (the response then carries a `note`).",
  ).optional(),
  onlyMask: flag("onlyMask").default(false).meta({ description: "Return the matte alone as a grayscale image, 255 = subject (beyond the spec). Not combinable with `replacement`." }),
  outputFormat: outputFormatField,
});

export const backgroundRemoveOutput = z.object({
  ...imageEnvelope,
  replacement: z
    .string()
    .meta({ description: "How `replacement` was understood: `none`, `color:#rrggbb` (`#rrggbbaa` when translucent), `image`, `blur`, `blur:<sigma>` or `generated:<model>`." }),
  note: z.string().optional().meta({ description: "Why the result may fall short, e.g. a people-only model was the best one installed." }),
});

export const backgroundRemoveExamples: OperationExamples = {
  needs: ["portrait-selfie"],
  success: {
    summary: "Put the subject of a 16x16 PNG on white with the selfie model",
    request: { imageUrl: EXAMPLE_IMAGE, replacement: "white", model: "portrait-selfie" },
    response: {
      id: "req_3f9c2d7e",
      created: 1795256153,
      model: "portrait-selfie",
      data: [{ url: EXAMPLE_RESULT_URL, mimeType: "image/png", width: 16, height: 16 }],
      replacement: "color:#ffffff",
    },
  },
  errors: {
    INVALID_INPUT: {
      summary: "A matte cannot have a replacement",
      request: { imageUrl: EXAMPLE_IMAGE, replacement: "white", onlyMask: true },
      message: "Expected no replacement with onlyMask, which returns the matte alone",
      issues: [{ path: "onlyMask", message: "Expected no replacement with onlyMask, which returns the matte alone" }],
    },
    INVALID_IMAGE_URL: { summary: "An address the server refuses to fetch (loopback)", request: { imageUrl: "http://127.0.0.1/photo.png", model: "portrait-selfie" } },
    SOURCE_FETCH_FAILED: { summary: "A host that does not exist", request: { imageUrl: "https://no-such-host.example/photo.png", model: "portrait-selfie" } },
    IMAGE_TOO_LARGE: { summary: `A 56 MP image, over the input pixel limit (ATELIER_MAX_INPUT_PIXELS, ${defaultOf("ATELIER_MAX_INPUT_PIXELS")} by default)`, request: { imageUrl: EXAMPLE_OVER_INPUT_LIMIT, model: "portrait-selfie" } },
    OUTPUT_TOO_LARGE: {
      summary: `A 20 MP image, over the output pixel limit (ATELIER_MAX_OUTPUT_PIXELS, ${defaultOf("ATELIER_MAX_OUTPUT_PIXELS")} by default)`,
      request: { imageUrl: EXAMPLE_OVER_OUTPUT_LIMIT, model: "portrait-selfie" },
    },
    IMAGE_UNDECODABLE: { summary: "Bytes that are not an image", request: { imageUrl: EXAMPLE_NOT_AN_IMAGE, model: "portrait-selfie" } },
    MODEL_NOT_INSTALLED: {
      summary: "A described scene needs a photographic generator",
      request: { imageUrl: EXAMPLE_IMAGE, replacement: "a sunny beach" },
      message: "Replacing the background with a described scene needs a photographic text-to-image model (`photographic: true` in GET /api/v1/models), and none is installed on this server. Colours, image URLs and `blur` work without it. An operator installs one, such as a Stable Diffusion export: `npm run models -- pull lcm-dreamshaper-v7` (lcm-dreamshaper-v7, also photographic: stable-diffusion-1-5).",
      issues: [{ path: "replacement", message: "No photographic text-to-image model is installed." }],
    },
  },
};
