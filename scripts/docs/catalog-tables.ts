/** docs/models.md's tables: every model of the catalog, by task, with its licence, size and install. */
import { entriesForTask, weightSize, type CatalogEntry, type ModelTask } from "../../models/catalog/model-catalog.js";
import { DEFAULT_PREFERENCE, MIN_NETWORK_SIDE } from "../../models/requests/upscale-choice.js";
import { ModelStore } from "../../models/store/model-store.js";
import { markdownTable } from "./markdown-table.js";

const TASKS: readonly [ModelTask, string][] = [
  ["upscale", "Upscaling (`POST /api/v1/tools/upscale`, field `model`)"],
  ["generate", "Text-to-image (`POST /api/v1/generate`, field `model`)"],
  ["style-transfer", "Style transfer (`POST /api/v1/tools/style-transfer`, field `style`)"],
  ["background-remove", "Background removal (`POST /api/v1/tools/background-remove`, field `model`)"],
  ["prompt-improve", "Prompt improvement (`POST /api/v1/prompt/improve`)"],
];

// Only its install command is read, which depends on the entry alone.
const store = new ModelStore("models");

function size(entry: CatalogEntry): string {
  if (entry.source.kind === "builtin") return "none";
  const bytes = weightSize(entry);
  if (bytes === 0) return "not pinned";
  return bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1000))} KB`;
}

function install(entry: CatalogEntry): string {
  switch (entry.source.kind) {
    case "builtin":
      return "built in";
    case "bundled":
      return "ships with Atelier";
    default:
      return `\`${store.installCommand(entry)}\``;
  }
}

function licence(entry: CatalogEntry): string {
  return entry.nonCommercial ? `${entry.license} (non-commercial)` : entry.license;
}

/** Upscalers' native factors and the factors they reach, for their table. */
function scales(entry: CatalogEntry): string[] {
  if (!entry.upscale) return [];
  const { nativeScales, supportedScales } = entry.upscale;
  return [entry.id === "lanczos" ? "any" : nativeScales.map((factor) => `${factor}x`).join(" "), `${Math.min(...supportedScales)}–${Math.max(...supportedScales)}`];
}

/** The fast default order of an upscale without `model`, by factor, from the entries' ranks. */
function upscaleDefaults(): string {
  const rows = Object.entries(DEFAULT_PREFERENCE).map(([factor, ids]) => [`x${factor}`, ids.map((id) => `\`${id}\``).join(", ")]);
  return (
    "### Upscale default order\n\nWithout `model`, the first installed model of its factor's list runs (images under " +
    `${MIN_NETWORK_SIDE} px a side get \`lanczos\`); within the time budget a stronger way may run instead (see the API guide).\n\n` +
    markdownTable(["Scale", "Models, first installed runs"], rows)
  );
}

export function catalogTables(): string {
  const sections = TASKS.map(([task, title]) => {
    const upscale = task === "upscale";
    const rows = entriesForTask(task).map((entry) => [`\`${entry.id}\``, entry.name, ...(upscale ? scales(entry) : []), licence(entry), size(entry), install(entry)]);
    const header = ["Id", "Name", ...(upscale ? ["Native", "Scales"] : []), "Licence", "Weights", "Install"];
    return `### ${title}\n\n${markdownTable(header, rows)}${upscale ? `\n\n${upscaleDefaults()}` : ""}`;
  });
  const credits = TASKS.flatMap(([task]) => entriesForTask(task))
    .filter((entry) => entry.attribution)
    .map((entry) => `- \`${entry.id}\`: ${entry.attribution}`);
  return [...sections, `### Attributions\n\n${credits.join("\n")}`].join("\n\n");
}
