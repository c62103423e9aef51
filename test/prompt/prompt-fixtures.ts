/** Shared cases and helpers for the prompt engine's tests. */
import fs from "node:fs";
import { BuiltinPromptEngine, type ImprovedVariant } from "../../workers/prompt/builtin-engine.js";
import { dedupeKeys } from "../../workers/prompt/dedupe-keys.js";
import { hasMirrorModel, mirrorPath } from "../support/test-assets.js";

export const MODIFIERS_FOLDER = mirrorPath("prompt-modifiers");
export const CLIP_MERGES_FILE = mirrorPath("clip-bpe-vocab", "bpe_simple_vocab_16e6.txt.gz");

/** Whether the prompt-modifier lists are in the mirror (notice, or failure in CI, when not). */
export const hasModifierLists = hasMirrorModel("prompt-modifiers") && fs.existsSync(mirrorPath("prompt-modifiers", "flavors.txt"));
export const hasClipVocabulary = hasMirrorModel("clip-bpe-vocab") && fs.existsSync(CLIP_MERGES_FILE);

/** Twenty varied ideas: animals, people, places, food, objects, fantasy, short and long. */
export const PROPERTY_PROMPTS = [
  "a cat on a roof",
  "portrait of a woman with red hair",
  "cyberpunk city at night, neon signs",
  "a wizard's tower on a cliff above the sea",
  "a bowl of ramen",
  "draw me a dragon",
  "mountains",
  "two old men playing chess in a park",
  "a red fox in the snow",
  "an astronaut riding a horse on the moon",
  "a lighthouse in a storm",
  "a cozy reading nook with a sleeping cat",
  "a vintage car on a desert road",
  "sunflowers in a blue vase",
  "a knight kneeling before a queen",
  "the surface of an alien planet with two moons",
  "a tiny robot watering plants",
  "a steaming cup of coffee on a rainy windowsill",
  "a samurai under cherry blossoms",
  "a bustling market street in Marrakech at dusk",
] as const;

/** Style and mood pairs: presets, synonyms and spelling variants, free text, nothing. */
export const STYLE_MOOD_PAIRS: readonly [string, string][] = [
  ["", ""],
  ["cinematic", "calm"],
  ["Watercolour", "cozy"],
  ["anime", "epic"],
  ["3D", "mysterious"],
  ["film noir", "melancholy"],
  ["kintsugi ceramics", "bittersweet longing"],
];

let shared: BuiltinPromptEngine | undefined;

/** One engine with the lists (and exact token counts when the vocabulary is there), built once per file. */
export function engineWithLists(): BuiltinPromptEngine {
  shared ??= new BuiltinPromptEngine({ modifiersFolder: MODIFIERS_FOLDER, clipMergesFile: hasClipVocabulary ? CLIP_MERGES_FILE : undefined });
  return shared;
}

/**
 * The terms the engine added after the user's words: the prompt is `[lead ]<user text>, term, term`.
 * Returns undefined when the user's text is not in the prompt verbatim.
 */
export function addedTerms(variant: ImprovedVariant, userText: string): { lead: string; terms: string[] } | undefined {
  const text = userText.replace(/\s+/g, " ").trim().replace(/[.,;:]+$/, "");
  const at = variant.prompt.indexOf(text);
  if (at < 0) return undefined;
  const rest = variant.prompt.slice(at + text.length).replace(/^,\s*/, "");
  return { lead: variant.prompt.slice(0, at).trim(), terms: rest === "" ? [] : rest.split(", ") };
}

/** Content words of a text in order, lower case. */
export function contentWordsInOrder(text: string): string[] {
  return dedupeKeys(text);
}

/** True when `needle` occurs in `haystack` in order (not necessarily adjacent). */
export function isSubsequence(needle: readonly string[], haystack: readonly string[]): boolean {
  let i = 0;
  for (const item of haystack) if (i < needle.length && item === needle[i]) i++;
  return i === needle.length;
}
