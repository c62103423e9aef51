/**
 * The body of every error answer (core/errors.ts `PublicError`), as a zod schema: the OpenAPI
 * document's `Error` component, and the base of a job's `error` (jobs/job-schemas.ts).
 */
import { z } from "zod";
import { ERROR_KINDS, type ErrorCode } from "../core/errors.js";

const ERROR_CODES = Object.keys(ERROR_KINDS) as [ErrorCode, ...ErrorCode[]];

export const errorSchema = z
  .strictObject({
    code: z.enum(ERROR_CODES).meta({ description: "Stable machine-readable code; the table in `info.description` says what each means." }),
    message: z.string().meta({ description: "What is wrong and how to fix it." }),
    requestId: z.string().meta({ description: "Also sent as `X-Request-Id`; quote it when reporting a problem." }),
    issues: z
      .array(
        z.strictObject({
          path: z.string().meta({ description: "Dotted field path, e.g. `scale`; empty for the whole body." }),
          message: z.string().meta({ description: "What is wrong with that field." }),
        }),
      )
      .optional()
      .meta({ description: "Present for invalid input: one entry per bad field." }),
  })
  .meta({ id: "Error", description: "The body of every error response." });

