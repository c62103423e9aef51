/** Prompt-improvement engines. */
import type { CatalogEntry } from "../catalog-types.js";
import { PROMPT_BUILTIN_DETAILS } from "../prompt-presets/prompt-builtin-details.js";
import { pinnedFiles } from "../pinned-files.js";
import { CLIP_MERGES_FILE } from "./clip-merges.js";

export const PROMPT_MODELS: CatalogEntry[] = [
  {
    id: "prompt-builtin",
    task: "prompt-improve",
    name: "Builtin prompt engine",
    description:
      "Offline prompt improvement: finds the subject of the prompt with an NLP library, expands 27 style and 18 mood presets, " +
      "and adds detail terms chosen for the subject from CLIP Interrogator's term lists, within CLIP's 77-token budget. " +
      "Works from its own preset tables when the term lists are not installed.",
    license: "MIT",
    nonCommercial: false,
    attribution: "Term lists from CLIP Interrogator by pharmapsychotic (MIT); CLIP BPE merges by OpenAI (MIT).",
    source: { kind: "files", files: [...pinnedFiles("prompt-builtin"), CLIP_MERGES_FILE] },
    graphs: {},
    details: PROMPT_BUILTIN_DETAILS,
  },
];
