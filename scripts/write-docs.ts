/**
 * Writes the generated parts of docs/ (scripts/docs/generated-regions.ts): the settings tables of
 * docs/configuration.md, the error table of docs/api.md and the model tables of docs/models.md.
 *
 *   npm run docs
 */
import fs from "node:fs";
import path from "node:path";
import { GENERATED_PAGES, withGeneratedRegions } from "./docs/generated-regions.js";

const root = path.resolve(import.meta.dirname, "..");
for (const page of GENERATED_PAGES) {
  const file = path.join(root, page);
  const before = fs.readFileSync(file, "utf8");
  const after = withGeneratedRegions(page, before);
  if (after !== before) fs.writeFileSync(file, after);
  console.log(`${after === before ? "unchanged" : "wrote    "} ${page}`);
}
