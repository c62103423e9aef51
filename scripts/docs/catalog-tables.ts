/** docs/models.md's tables: every model of the catalog, by task, with its licence, size and install. */
import { entriesForTask, weightSize, type CatalogEntry, type ModelTask } from "../../models/catalog/model-catalog.js";
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

export function catalogTables(): string {
  const sections = TASKS.map(([task, title]) => {
    const rows = entriesForTask(task).map((entry) => [`\`${entry.id}\``, entry.name, licence(entry), size(entry), install(entry)]);
    return `### ${title}\n\n${markdownTable(["Id", "Name", "Licence", "Weights", "Install"], rows)}`;
  });
  const credits = TASKS.flatMap(([task]) => entriesForTask(task))
    .filter((entry) => entry.attribution)
    .map((entry) => `- \`${entry.id}\`: ${entry.attribution}`);
  return [...sections, `### Attributions\n\n${credits.join("\n")}`].join("\n\n");
}
