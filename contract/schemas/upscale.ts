/** The request and answer of `POST /v1/tools/upscale`, and its documented examples. */
import { z } from "zod";
import { defaultOf } from "../../core/config.js";
import { LIMITS } from "../../core/limits.js";
import { UPSCALE_QUALITIES } from "../../core/upscale-quality.js";
import { boundedInteger, imageUrlField, modelIdField, oneOf, outputFormatField, requestBody } from "../field-schemas.js";
import { imageEnvelope } from "../response-schemas.js";
import { EXAMPLE_IMAGE, EXAMPLE_ENLARGES_TOO_FAR, EXAMPLE_NOT_AN_IMAGE, EXAMPLE_RESULT_URL, EXAMPLE_OVER_INPUT_LIMIT } from "../example-images.js";
import { upscaleModelsText } from "../catalog-docs.js";
import type { OperationExamples } from "../operation-examples.js";

export const upscaleInput = requestBody({
  imageUrl: imageUrlField,
  scale: boundedInteger("scale", LIMITS.upscaleScale)
    .default(2)
    .meta({ description: `Enlargement factor for both sides, ${LIMITS.upscaleScale.min} to ${LIMITS.upscaleScale.max} (default 2). The output must stay within the server's pixel limit (${defaultOf("ATELIER_MAX_OUTPUT_PIXELS")} by default).` }),
  model: modelIdField(
    `Upscale model id (beyond the spec), one of the catalog's: ${upscaleModelsText()}. ` +
      "Default: the best installed model for the scale and image (`lanczos` when no network is installed, and for images under 32 px on a side); " +
      "`model` in the response names the one that ran. " +
      "An unknown id or a scale the model cannot reach is a 400; a model that is not installed a 503 naming the install command (`GET /api/v1/models` shows what is installed).",
  ).optional(),
  quality: oneOf("quality", UPSCALE_QUALITIES)
    .optional()
    .meta({
      description:
        "How much time to spend for how much fidelity when `model` is omitted (beyond the spec; not allowed together with `model`). " +
        "`fast`: the fast default network, run once. `balanced` (default): a stronger, slower way (LSDIR as a self-ensemble of eight orientations at x2, ESRGAN thick at x4) " +
        `when its predicted time fits the server's time budget (ATELIER_UPSCALE_TIME_BUDGET_MS, ${defaultOf("ATELIER_UPSCALE_TIME_BUDGET_MS")} by default), else \`fast\`. ` +
        "`max`: the way with the highest measured fidelity for the scale, LSDIR as a self-ensemble of eight at x2 and x4 (about 8 times LSDIR's time), whatever the budget; " +
        "other scales get the `balanced` choice. `max` answers 400 when its predicted time would not finish within the worker deadline " +
        "(with the defaults about 3.5 MP of output at x2, 14 MP at x4) and 503 when LSDIR is not installed. `steps` in the response says what ran.",
    }),
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

export const upscaleExamples: OperationExamples = {
  needs: [],
  success: {
    summary: "Enlarge a 16x16 PNG four times with Lanczos-3",
    request: { imageUrl: EXAMPLE_IMAGE, scale: 4, model: "lanczos" },
    response: {
      id: "req_3f9c2d7e",
      created: 1795256153,
      model: "lanczos",
      data: [{ url: EXAMPLE_RESULT_URL, mimeType: "image/png", width: 64, height: 64 }],
      scale: 4,
      nativeScale: 4,
      steps: ["lanczos3 x4"],
    },
  },
  errors: {
    INVALID_INPUT: {
      summary: "A scale out of range",
      request: { imageUrl: EXAMPLE_IMAGE, scale: 9 },
      message: "Invalid request: Expected integer between 2 and 8 for scale but received 9",
      issues: [{ path: "scale", message: "Expected integer between 2 and 8 for scale but received 9" }],
    },
    INVALID_IMAGE_URL: { summary: "An address the server refuses to fetch (loopback)", request: { imageUrl: "http://127.0.0.1/photo.png" } },
    SOURCE_FETCH_FAILED: { summary: "A host that does not exist", request: { imageUrl: "https://no-such-host.example/photo.png" } },
    IMAGE_TOO_LARGE: { summary: `A 56 MP image, over the input pixel limit (ATELIER_MAX_INPUT_PIXELS, ${defaultOf("ATELIER_MAX_INPUT_PIXELS")} by default)`, request: { imageUrl: EXAMPLE_OVER_INPUT_LIMIT } },
    IMAGE_UNDECODABLE: { summary: "Bytes that are not an image", request: { imageUrl: EXAMPLE_NOT_AN_IMAGE } },
    MODEL_NOT_INSTALLED: {
      summary: "A model this server has not installed (here LSDIR compact)",
      request: { imageUrl: EXAMPLE_IMAGE, scale: 4, model: "lsdir-compact-x4" },
      message: "The model \"lsdir-compact-x4\" is not installed on this server (files missing). An operator installs it with `npm run models -- pull lsdir-compact-x4`.",
    },
    OUTPUT_TOO_LARGE: { summary: "A 600x600 image enlarged 8x is over the output limit", request: { imageUrl: EXAMPLE_ENLARGES_TOO_FAR, scale: 8, model: "lanczos" } },
  },
};
