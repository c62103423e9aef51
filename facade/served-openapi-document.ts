/**
 * The OpenAPI document as the server serves it at `/api/v1/openapi.json`: generated from the router
 * (openapi-document.ts), with the jobs feature (jobs/openapi-jobs.ts) and then the multipart forms
 * of the image operations (upload-forms.ts, which copy the JSON bodies' fields, `webhookUrl` too),
 * then written for one server with full paths (openapi-one-server.ts).
 * The facade serves it and the client types are generated from it.
 */
import type { OpenAPIObject } from "trpc-to-openapi";
import { documentJobs } from "../jobs/openapi-jobs.js";
import { buildOpenApiDocument } from "./openapi-document.js";
import { onOneServer } from "./openapi-one-server.js";
import { documentUploads } from "./upload-forms.js";

export function servedOpenApiDocument(version: string): OpenAPIObject {
  return onOneServer(documentUploads(documentJobs(buildOpenApiDocument(version))));
}
