/** The REST paths the router serves and their methods, read from the OpenAPI document. */
import type { OpenAPIObject } from "trpc-to-openapi";

const HTTP_METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Full path (e.g. `/api/v1/tools/upscale`) to its upper-case methods. */
export function restRoutes(document: OpenAPIObject, prefix: string): Map<string, string[]> {
  const routes = new Map<string, string[]>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const methods = HTTP_METHODS.filter((method) => item && method in item).map((method) => method.toUpperCase());
    routes.set(`${prefix}${path}`, methods);
  }
  return routes;
}
