/** Prompt-improvement engines. */
import type { CatalogEntry } from "../catalog-types.js";
import { pinnedFiles } from "../pinned-files.js";

export const PROMPT_MODELS: CatalogEntry[] = [
  {
    id: "prompt-builtin",
    task: "prompt-improve",
    name: "Builtin prompt engine",
    description:
      "Offline prompt improvement: finds the subject of the prompt and adds style, mood and detail terms chosen for it " +
      "from curated vocabularies (CLIP Interrogator's term lists).",
    license: "MIT",
    nonCommercial: false,
    attribution: "Term lists from CLIP Interrogator by pharmapsychotic (MIT).",
    source: { kind: "files", files: pinnedFiles("prompt-builtin") },
    graphs: {},
  },
];
