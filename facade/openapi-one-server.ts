/**
 * The document as standard tools read it: one server, at the root, and every path written in full.
 * The builders describe the API's paths relative to its `/api` base (trpc-to-openapi's base URL, the
 * jobs and upload steps) and give the health endpoints, which live at the root, a path-level server.
 * Validating proxies and code generators honour only the document's servers, so this last step
 * folds each path's server into the path itself; the public URLs stay what they were.
 */
import type { OpenAPIObject } from "trpc-to-openapi";

type PathItem = { servers?: { url: string }[] } & Record<string, unknown>;

const joined = (base: string, path: string) => `${base.replace(/\/+$/, "")}${path}`;

export function onOneServer(document: OpenAPIObject): OpenAPIObject {
  const base = document.servers?.[0]?.url ?? "/";
  const paths: Record<string, PathItem> = {};
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, PathItem>)) {
    const { servers, ...operations } = item;
    const full = joined(servers?.[0]?.url ?? base, path);
    if (full in paths) throw new Error(`OpenAPI: two path items resolve to ${full}`);
    paths[full] = operations;
  }
  return { ...document, servers: [{ url: "/", description: "This server: the API under /api (its document at /api/v1/openapi.json), health probes at the root." }], paths } as OpenAPIObject;
}
