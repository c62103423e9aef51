/**
 * What the `prompt-builtin` catalog record tells clients (`details` of its `/models` entry): the
 * style and mood presets they may name, and how the engine behaves without its word lists. Kept
 * free of the engine's imports so the catalog can load it without the NLP library.
 */
import { MOOD_PRESETS } from "./mood-presets.js";
import { STYLE_PRESETS } from "./style-presets.js";

export const PROMPT_BUILTIN_DETAILS = {
  styles: STYLE_PRESETS.map(({ id, name, aliases, lead, terms, negative }) => ({ id, name, aliases, lead, terms, negative })),
  moods: MOOD_PRESETS.map(({ id, name, aliases, lighting, color, atmosphere, negative }) => ({ id, name, aliases, lighting, color, atmosphere, negative })),
  /** Default length limit in CLIP tokens (start and end markers included); requests may ask 16 to 512. */
  defaultMaxTokens: 77,
  matching:
    "style and mood match a preset id, name or alias case-insensitively, ignoring spaces, hyphens, plurals and British/American spelling; " +
    "text containing exactly one preset name selects it and is kept as written; other text is woven into the prompt as written.",
  withoutLists:
    "Without the prompt-modifier lists (npm run models -- pull prompt-builtin) the engine still answers from these tables and its own " +
    "per-subject lighting, composition and quality terms, but adds no flavour-list details, subject features or default medium.",
  artists: "The engine never adds artists' or other people's names; names the user writes are kept as written.",
} as const;
