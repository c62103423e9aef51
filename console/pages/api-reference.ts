/**
 * The API reference page: the service's own OpenAPI document (`/api/v1/openapi.json`, generated
 * from the same zod schemas the API validates with) rendered by Swagger UI from swagger-ui-dist,
 * served by Atelier. It needs no sign-in: the document itself is public.
 */
import { createRequire } from "node:module";
import path from "node:path";
import type express from "express";
import type { AtelierServices } from "../../server/context.js";
import { registerVendorAsset } from "../server/assets.js";
import { html } from "../server/html.js";
import { registerPage } from "../server/pages.js";

const require = createRequire(import.meta.url);
export const OPENAPI_DOCUMENT_PATH = "/api/v1/openapi.json";

export function registerApiReferencePage(router: express.Router, services: AtelierServices): void {
  const dist = path.dirname(require.resolve("swagger-ui-dist/package.json"));
  registerVendorAsset("swagger-ui-bundle.js", path.join(dist, "swagger-ui-bundle.js"));
  registerVendorAsset("swagger-ui.css", path.join(dist, "swagger-ui.css"));
  registerPage(router, services, {
    path: "/reference",
    title: "API reference",
    nav: { label: "API reference", order: 50 },
    access: "public",
    scripts: ["vendor/swagger-ui-bundle.js", "api-reference.js"],
    styles: ["vendor/swagger-ui.css", "api-reference.css"],
    get: () =>
      html`<p class="lead">Every endpoint of this server, from its OpenAPI document (<a href="${OPENAPI_DOCUMENT_PATH}">${OPENAPI_DOCUMENT_PATH}</a>). Authenticate with <code>Authorization: Bearer &lt;API key&gt;</code>; keys come from the <a href="/keys">API keys</a> page.</p>
        <div id="api-reference" class="api-reference" data-spec-url="${OPENAPI_DOCUMENT_PATH}"><p class="muted">Loading the reference…</p></div>`,
  });
}
