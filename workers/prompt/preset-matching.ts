/**
 * Understanding the `style` and `mood` fields: a preset id, name or alias in any case, spacing,
 * hyphenation, plural or British/American spelling ("Watercolour", "water-color", "3D", "Film
 * Noir") selects that preset; text that contains exactly one preset name ("soft watercolor and
 * ink") selects it too and is kept as written; anything else is free text, woven into the prompt as
 * written.
 */
import { MOOD_PRESETS, type MoodPreset } from "../../models/catalog/prompt-presets/mood-presets.js";
import { STYLE_PRESETS, type StylePreset } from "../../models/catalog/prompt-presets/style-presets.js";
import { termKey, words } from "./term-keys.js";

export type PresetMatch<P> =
  /** No text. */
  | { kind: "none" }
  /** The text names the preset. */
  | { kind: "preset"; preset: P }
  /** The text mentions the preset among other words; `text` is kept as written. */
  | { kind: "contains"; preset: P; text: string }
  /** Not a preset: woven in as written. */
  | { kind: "free"; text: string };

/** Filler around style names: "in the style of anime", "anime style", "an anime look". */
const LEADING_FILLER = /^(?:(?:in|with|as)\s+)?(?:(?:the|a|an)\s+)?(?:(?:style|look|aesthetic)\s+of\s+)?(?:(?:the|a|an)\s+)?/i;
const TRAILING_FILLER = /\s+(?:style|styled|look|aesthetic|vibe|vibes|mood|feel|feeling)$/i;

/** Words of a name as keys, joined without separators: "Water-Colours" → "watercolor". */
function compactKey(text: string): string {
  return words(text.replace(/[-_/]+/g, " ")).map(termKey).join("");
}

function keyWords(text: string): string[] {
  return words(text.replace(/[-_/]+/g, " ")).map(termKey);
}

class PresetMatcher<P extends { id: string; name: string; aliases: string[] }> {
  private readonly exact = new Map<string, P>();
  /** Each name's key words, longest names first, for "contains" matches. */
  private readonly names: { words: string[]; preset: P }[] = [];

  constructor(presets: readonly P[]) {
    for (const preset of presets) {
      for (const name of [preset.id, preset.name, ...preset.aliases]) {
        const key = compactKey(name);
        if (key !== "" && !this.exact.has(key)) this.exact.set(key, preset);
        this.names.push({ words: keyWords(name), preset });
      }
    }
    this.names.sort((a, b) => b.words.length - a.words.length);
  }

  match(raw: string): PresetMatch<P> {
    const text = raw.replace(/\s+/g, " ").trim();
    if (text === "") return { kind: "none" };
    const core = text.replace(LEADING_FILLER, "").replace(TRAILING_FILLER, "").trim() || text;
    const exact = this.exact.get(compactKey(core)) ?? this.nearMiss(compactKey(core));
    if (exact) return { kind: "preset", preset: exact };
    // Longest names first; a shorter name inside a longer one found already ("film" in "film noir") does not count.
    const found = new Set<P>();
    const textWords = keyWords(core);
    const covered = new Array<boolean>(textWords.length).fill(false);
    let first: P | undefined;
    for (const { words: nameWords, preset } of this.names) {
      const at = findRun(textWords, nameWords);
      if (at < 0 || covered.slice(at, at + nameWords.length).some(Boolean)) continue;
      covered.fill(true, at, at + nameWords.length);
      found.add(preset);
      first ??= preset;
    }
    if (found.size === 1 && first) return { kind: "contains", preset: first, text };
    return { kind: "free", text };
  }

  /** One typo away from exactly one name of six letters or more ("cinematc", "watercolr"). */
  private nearMiss(key: string): P | undefined {
    if (key.length < 6) return undefined;
    let hit: P | undefined;
    for (const [name, preset] of this.exact) {
      if (name.length >= 6 && Math.abs(name.length - key.length) <= 1 && editDistanceAtMostOne(name, key)) {
        if (hit && hit !== preset) return undefined;
        hit = preset;
      }
    }
    return hit;
  }
}

/** Index where `needle` occurs as a contiguous run of `haystack`, or -1. */
function findRun(haystack: string[], needle: string[]): number {
  if (needle.length === 0) return -1;
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function editDistanceAtMostOne(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.length === b.length) {
    let diff = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && ++diff > 1) return false;
    return true;
  }
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  let i = 0;
  let j = 0;
  let skipped = false;
  while (i < short.length && j < long.length) {
    if (short[i] === long[j]) {
      i++;
      j++;
    } else if (skipped) return false;
    else {
      skipped = true;
      j++;
    }
  }
  return true;
}

const styleMatcher = new PresetMatcher<StylePreset>(STYLE_PRESETS);
const moodMatcher = new PresetMatcher<MoodPreset>(MOOD_PRESETS);

export function matchStyle(text: string): PresetMatch<StylePreset> {
  return styleMatcher.match(text);
}

export function matchMood(text: string): PresetMatch<MoodPreset> {
  return moodMatcher.match(text);
}

/** What a match is reported as: the preset id, or the text as written; "" for none. */
export function understoodAs(match: PresetMatch<{ id: string }>): string {
  switch (match.kind) {
    case "none":
      return "";
    case "preset":
      return match.preset.id;
    case "contains":
    case "free":
      return match.text;
  }
}
