/** The committed docs pages hold exactly what `npm run docs` writes from the settings, errors and catalog. */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../core/config.js";
import { ERROR_KINDS } from "../../core/errors.js";
import { MODEL_CATALOG } from "../../models/catalog/model-catalog.js";
import { GENERATED_PAGES, withGeneratedRegions } from "../../scripts/docs/generated-regions.js";

const root = path.resolve(import.meta.dirname, "../..");
const read = (page: string) => fs.readFileSync(path.join(root, page), "utf8");

describe("generated docs", () => {
  it.each(GENERATED_PAGES)("%s is what npm run docs writes", (page) => {
    const committed = read(page);
    expect(committed, `run \`npm run docs\` and commit ${page}`).toBe(withGeneratedRegions(page, committed));
  });

  it("documents every setting, error code and model", () => {
    const configuration = read("docs/configuration.md");
    for (const name of Object.keys(SETTINGS)) expect(configuration).toContain(`| \`${name}\` |`);
    const api = read("docs/api.md");
    for (const [code, kind] of Object.entries(ERROR_KINDS)) if (kind.scope !== "unseen") expect(api).toContain(`| \`${code}\` |`);
    const models = read("docs/models.md");
    for (const entry of MODEL_CATALOG) expect(models).toContain(`| \`${entry.id}\` |`);
  });

  it("refuses a page that lost its markers", () => {
    expect(() => withGeneratedRegions("docs/configuration.md", "# Configuration\n")).toThrow(/lacks the markers/);
  });
});
