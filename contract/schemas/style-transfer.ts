/** The request and answer of `POST /v1/tools/style-transfer`, and its documented examples. */
import { z } from "zod";
import { defaultOf } from "../../core/config.js";
import { LIMITS } from "../../core/limits.js";
import { boundedNumber, flag, imageUrlField, outputFormatField, requestBody } from "../field-schemas.js";
import { imageEnvelope } from "../response-schemas.js";
import { EXAMPLE_IMAGE, EXAMPLE_NOT_AN_IMAGE, EXAMPLE_RESULT_URL, EXAMPLE_OVER_INPUT_LIMIT, EXAMPLE_OVER_OUTPUT_LIMIT } from "../example-images.js";
import { styleIds } from "../catalog-docs.js";
import type { OperationExamples } from "../operation-examples.js";

export const styleTransferInput = requestBody({
  imageUrl: imageUrlField,
  style: z
    .string({ error: "Expected a style id (see GET /api/v1/models) for style" })
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, { error: "Expected a style id (lower-case letters, digits, hyphens; see GET /api/v1/models) for style" })
    .meta({
      description:
        `Style id: one of the \`style-transfer\` records of \`GET /api/v1/models\` (${styleIds().map((id) => `\`${id}\``).join(", ")}). ` +
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

export const styleTransferExamples: OperationExamples = {
  needs: ["mathura"],
  success: {
    summary: "Repaint a 16x16 PNG in the Mathura style at 80%",
    request: { imageUrl: EXAMPLE_IMAGE, style: "mathura", strength: 0.8 },
    response: {
      id: "req_3f9c2d7e",
      created: 1795256153,
      model: "mathura",
      data: [{ url: EXAMPLE_RESULT_URL, mimeType: "image/png", width: 16, height: 16 }],
      style: "mathura",
    },
  },
  errors: {
    INVALID_INPUT: {
      summary: "A style that does not exist",
      request: { imageUrl: EXAMPLE_IMAGE, style: "picasso" },
      message: "Unknown style \"picasso\". Available styles: la-muse, mathura, … (see GET /api/v1/models).",
      issues: [{ path: "style", message: "Expected one of la-muse, mathura, … but received \"picasso\"." }],
    },
    MODEL_NOT_INSTALLED: {
      summary: "A style this server has not installed (here candy-lite)",
      request: { imageUrl: EXAMPLE_IMAGE, style: "candy-lite" },
      message: "The model \"candy-lite\" is not installed on this server (files missing). An operator installs it with `npm run models -- pull candy-lite`. Usable style-transfer styles on this server: mathura.",
    },
    INVALID_IMAGE_URL: { summary: "An address the server refuses to fetch (loopback)", request: { imageUrl: "http://127.0.0.1/photo.png", style: "mathura" } },
    SOURCE_FETCH_FAILED: { summary: "A host that does not exist", request: { imageUrl: "https://no-such-host.example/photo.png", style: "mathura" } },
    IMAGE_TOO_LARGE: { summary: `A 56 MP image, over the input pixel limit (ATELIER_MAX_INPUT_PIXELS, ${defaultOf("ATELIER_MAX_INPUT_PIXELS")} by default)`, request: { imageUrl: EXAMPLE_OVER_INPUT_LIMIT, style: "mathura" } },
    OUTPUT_TOO_LARGE: {
      summary: `A 20 MP image, over the output pixel limit (ATELIER_MAX_OUTPUT_PIXELS, ${defaultOf("ATELIER_MAX_OUTPUT_PIXELS")} by default)`,
      request: { imageUrl: EXAMPLE_OVER_OUTPUT_LIMIT, style: "mathura" },
    },
    IMAGE_UNDECODABLE: { summary: "Bytes that are not an image", request: { imageUrl: EXAMPLE_NOT_AN_IMAGE, style: "mathura" } },
  },
};
