/**
 * The parts of docs/ written from the code: each lies between two marker comments in its page, and
 * `npm run docs` (scripts/write-docs.ts) rewrites it; test/docs/generated-docs.test.ts fails when a
 * committed page differs from what would be written. The prose around the markers is written by hand.
 */
import { catalogTables } from "./catalog-tables.js";
import { errorTable } from "./error-table.js";
import { settingsTables } from "./settings-tables.js";

interface GeneratedRegion {
  /** Page, relative to the repository root. */
  page: string;
  /** Names the markers: `<!-- generated: NAME -->` … `<!-- end generated: NAME -->`. */
  name: string;
  /** Where the facts come from, told in the opening marker. */
  source: string;
  render(): string;
}

export const GENERATED_REGIONS: readonly GeneratedRegion[] = [
  { page: "docs/configuration.md", name: "settings", source: "core/config.ts", render: settingsTables },
  { page: "docs/api.md", name: "errors", source: "core/errors.ts", render: errorTable },
  { page: "docs/models.md", name: "catalog", source: "models/catalog/", render: catalogTables },
];

export const GENERATED_PAGES: readonly string[] = [...new Set(GENERATED_REGIONS.map((region) => region.page))];

/** `markdown` (the page `page`) with each of its generated regions written afresh. */
export function withGeneratedRegions(page: string, markdown: string): string {
  let text = markdown;
  for (const region of GENERATED_REGIONS.filter((candidate) => candidate.page === page)) {
    const start = new RegExp(`<!-- generated: ${region.name}\\b[^>]*-->`);
    const end = `<!-- end generated: ${region.name} -->`;
    const from = text.search(start);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`${page} lacks the markers of its generated ${region.name} (<!-- generated: ${region.name} --> … ${end}).`);
    const opening = `<!-- generated: ${region.name} from ${region.source} by npm run docs; edit there, not here -->`;
    text = `${text.slice(0, from)}${opening}\n\n${region.render()}\n\n${text.slice(to)}`;
  }
  return text;
}
