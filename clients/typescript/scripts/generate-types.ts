/**
 * Regenerates src/generated/openapi.ts.
 *
 *   tsx clients/typescript/scripts/generate-types.ts                       # from facade/served-openapi-document.ts
 *   tsx clients/typescript/scripts/generate-types.ts http://host:8080      # from a running server
 *
 * The first form builds the document the server would serve, without starting one; the second
 * fetches `/api/v1/openapi.json` from the given origin (useful outside this repository).
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderTypes } from "./openapi-types.js";

export const GENERATED_TYPES_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "src", "generated", "openapi.ts");

async function loadDocument(origin: string | undefined): Promise<object> {
  if (origin) {
    const url = new URL("/api/v1/openapi.json", origin);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
    return (await response.json()) as object;
  }
  // As facade/app.ts serves it; the coverage test compares the result with the served document.
  const { servedOpenApiDocument } = await import("../../../facade/served-openapi-document.js");
  return servedOpenApiDocument("0.0.0");
}

const document = await loadDocument(process.argv[2]);
fs.mkdirSync(path.dirname(GENERATED_TYPES_PATH), { recursive: true });
fs.writeFileSync(GENERATED_TYPES_PATH, await renderTypes(document));
console.log(`wrote ${path.relative(process.cwd(), GENERATED_TYPES_PATH)}`);
