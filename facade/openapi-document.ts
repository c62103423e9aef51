/**
 * The OpenAPI document, generated from the router's zod schemas, then completed with what the
 * generator cannot know: the Bearer scheme, the public error schema, the rate-limit headers and
 * the error statuses each operation can answer.
 */
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { z } from "zod";
import { ERROR_KINDS, type ErrorCode } from "../core/errors.js";
import { appRouter } from "../server/router.js";
import { HEALTH_OPENAPI_PATHS } from "../operations/health/health-openapi.js";

const ERROR_CODES = Object.keys(ERROR_KINDS) as [ErrorCode, ...ErrorCode[]];

const errorSchema = z
  .object({
    code: z.enum(ERROR_CODES).meta({ description: "Stable machine-readable code." }),
    message: z.string().meta({ description: "What is wrong and how to fix it." }),
    requestId: z.string().meta({ description: "Also sent as `X-Request-Id`; quote it when reporting a problem." }),
    issues: z
      .array(z.object({ path: z.string().meta({ description: "Dotted field path, e.g. `scale`." }), message: z.string() }))
      .optional()
      .meta({ description: "Present for invalid input: one entry per bad field." }),
  })
  .meta({ id: "Error" });

const header = (description: string, type: "string" | "integer" = "string") => ({ description, schema: { type } });

const RATE_LIMIT_HEADERS = {
  "RateLimit-Policy": header('Quota policy (IETF draft), e.g. `"hourly";q=100;w=3600`.'),
  RateLimit: header('Quota state (IETF draft), e.g. `"hourly";r=99;t=3540` (remaining, seconds to reset).'),
  "X-RateLimit-Limit": header("Requests allowed per window for this key.", "integer"),
  "X-RateLimit-Remaining": header("Requests left in the current window.", "integer"),
  "X-RateLimit-Reset": header("Unix time (seconds) when the window resets.", "integer"),
};
const REQUEST_ID_HEADER = { "X-Request-Id": header("Id of this request.") };

const ERROR_STATUSES: Record<string, string> = {
  "400": "Invalid input (`INVALID_INPUT`, `MALFORMED_JSON`, `INVALID_IMAGE_URL`).",
  "401": "Missing or invalid API key (`UNAUTHORIZED`); carries `WWW-Authenticate: Bearer`.",
  "413": "Body, source image or result too large.",
  "415": "The body is not `application/json`.",
  "422": "The source is not a decodable image (`IMAGE_UNDECODABLE`).",
  "429": "Quota spent (`RATE_LIMITED`); carries `Retry-After`.",
  "500": "Internal failure.",
  "502": "The source image could not be fetched (`SOURCE_FETCH_FAILED`).",
  "503": "Model not installed or server busy; carries `Retry-After`.",
  "504": "The operation did not finish in time.",
};

type Operation = { security?: unknown[]; responses?: Record<string, { description?: string; headers?: object; content?: object }> };

export function buildOpenApiDocument(version: string): OpenAPIObject {
  const document = generateOpenApiDocument(appRouter, {
    title: "Atelier API",
    description:
      "Self-hosted image AI: generation, upscaling, style transfer, background removal and prompt improvement. " +
      "Authenticate with `Authorization: Bearer <API key>`. Every key has an hourly quota (100 requests by default).",
    version,
    baseUrl: "/api",
    securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API key from `npm run keys -- create`." } },
    defs: { Error: errorSchema },
  });
  const errorContent = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, Operation>)) {
      const responses = (operation.responses ??= {});
      const metered = Array.isArray(operation.security) && operation.security.length > 0;
      for (const [status, response] of Object.entries(responses)) {
        if (status.startsWith("2")) {
          response.headers = { ...REQUEST_ID_HEADER, ...(metered ? RATE_LIMIT_HEADERS : {}) };
        } else {
          delete responses[status];
        }
      }
      for (const [status, description] of Object.entries(ERROR_STATUSES)) {
        if (!metered && ["401", "413", "415", "422", "429", "502"].includes(status)) continue;
        responses[status] = { description, headers: REQUEST_ID_HEADER, content: errorContent };
      }
    }
  }
  // Health endpoints live outside the router (no key, no quota): their entries are written by hand.
  Object.assign((document.paths ??= {}), HEALTH_OPENAPI_PATHS);
  return document;
}
