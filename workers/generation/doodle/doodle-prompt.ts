/**
 * Reads a free-text prompt as one of the doodle model's classes. compromise tokenises the prompt
 * and gives each word its lemma and singular, so "Two Owls!", "owl's" and "owls" all reach `owl`;
 * the class names (`light_bulb` read as "light bulb") and the synonym table are matched as word
 * sequences, so multi-word names and joined spellings ("ice-cream", "lightbulb") both work, and a
 * word inside another ("lighter" in "lighters") never matches by accident.
 *
 * Choice when several classes are named: a class name or strong synonym beats a loose one; then
 * the earliest mention wins ("an owl in the moonlight" draws the owl); at the same word the longest
 * phrase wins ("alarm clock" over "alarm", "microwave oven" over "oven").
 */
import nlp from "compromise";
import { DOODLE_SYNONYMS, type DoodleSynonyms } from "./doodle-synonyms.js";

/** How a class was named: by its own name, a strong synonym, or a loose one. */
export type MatchKind = "name" | "synonym" | "related";

export interface DoodleClassMatch {
  /** Manifest label, e.g. `light_bulb`. */
  label: string;
  /** Position of the label in the manifest (the one-hot index is this + 1). */
  index: number;
  /** The prompt's words that named it, as written. */
  matched: string;
  kind: MatchKind;
}

interface Phrase {
  words: string[];
  label: string;
  kind: MatchKind;
}

interface Token {
  /** Lower-case spellings the word may stand for: as written, lemma, singular. */
  forms: Set<string>;
  start: number;
  end: number;
}

/** The part of compromise's world this module uses; `nlp.world()` is typed as a bare object. */
interface CompromiseWorld {
  model: unknown;
  methods: { two: { transform: { noun: { toSingular(word: string, model: unknown): string } } } };
}

const world = nlp.world() as CompromiseWorld;
const singularOf = (word: string): string => world.methods.two.transform.noun.toSingular(word, world.model);

/** Hyphens, slashes and underscores separate words ("ice-cream", "paper_clip"); other punctuation goes. */
function normaliseText(text: string): string {
  return text.replace(/[-_/\u2010-\u2015]/g, " ");
}

function phraseWords(phrase: string): string[] {
  return normaliseText(phrase.toLowerCase()).split(/\s+/).filter(Boolean);
}

/** Words of the prompt with their offsets in it (normalising keeps every character in place). */
function tokenise(prompt: string): Token[] {
  const doc = nlp(normaliseText(prompt));
  doc.compute("root");
  const sentences = doc.json({ offset: true, terms: { offset: true } }) as Array<{
    terms: Array<{ normal: string; root?: string; offset: { start: number; length: number } }>;
  }>;
  const tokens: Token[] = [];
  for (const sentence of sentences) {
    for (const term of sentence.terms) {
      const normal = term.normal.replace(/['\u2019]s?$/, "");
      if (normal === "") continue;
      const forms = new Set([normal, singularOf(normal)]);
      if (term.root) forms.add(term.root);
      tokens.push({ forms, start: term.offset.start, end: term.offset.start + term.offset.length });
    }
  }
  return tokens;
}

const RANK: Record<MatchKind, number> = { name: 0, synonym: 0, related: 1 };

export class DoodleVocabulary {
  private readonly phrasesByFirstWord = new Map<string, Phrase[]>();

  /**
   * `labels`: the model's manifest labels in order. Synonyms of labels the manifest lacks are
   * ignored, so the table cannot make the model draw a class it does not have.
   */
  constructor(
    readonly labels: readonly string[],
    synonyms: Readonly<Record<string, DoodleSynonyms>> = DOODLE_SYNONYMS,
  ) {
    for (const label of labels) {
      this.add(label, label, "name");
      for (const word of synonyms[label]?.strong ?? []) this.add(word, label, "synonym");
      for (const word of synonyms[label]?.loose ?? []) this.add(word, label, "related");
    }
  }

  /** "light bulb" for `light_bulb`: how people write the class. */
  static displayName(label: string): string {
    return label.replaceAll("_", " ");
  }

  /** The class the prompt asks for, or undefined when it names none of them. */
  read(prompt: string): DoodleClassMatch | undefined {
    const tokens = tokenise(prompt);
    let best: { phrase: Phrase; start: number } | undefined;
    for (let start = 0; start < tokens.length; start++) {
      for (const form of tokens[start]!.forms) {
        for (const phrase of this.phrasesByFirstWord.get(form) ?? []) {
          if (!matchesAt(phrase.words, tokens, start)) continue;
          if (best === undefined || isBetter(phrase, start, best.phrase, best.start)) best = { phrase, start };
        }
      }
    }
    if (!best) return undefined;
    const first = tokens[best.start]!;
    const last = tokens[best.start + best.phrase.words.length - 1]!;
    return {
      label: best.phrase.label,
      index: this.labels.indexOf(best.phrase.label),
      matched: prompt.slice(first.start, last.end),
      kind: best.phrase.kind,
    };
  }

  private add(text: string, label: string, kind: MatchKind): void {
    const words = phraseWords(text);
    const first = words[0];
    if (first === undefined) return;
    const list = this.phrasesByFirstWord.get(first) ?? [];
    list.push({ words, label, kind });
    this.phrasesByFirstWord.set(first, list);
  }
}

function matchesAt(words: readonly string[], tokens: readonly Token[], start: number): boolean {
  if (start + words.length > tokens.length) return false;
  return words.every((word, offset) => tokens[start + offset]!.forms.has(word));
}

/** Stronger kind, then earlier, then longer (more specific). */
function isBetter(phrase: Phrase, start: number, best: Phrase, bestStart: number): boolean {
  if (RANK[phrase.kind] !== RANK[best.kind]) return RANK[phrase.kind] < RANK[best.kind];
  if (start !== bestStart) return start < bestStart;
  return phrase.words.length > best.words.length;
}
