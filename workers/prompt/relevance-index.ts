/**
 * The relevance index over CLIP Interrogator's flavour list (100,970 fragments of real prompts,
 * most frequent first): which lighting, composition and quality terms suit this subject?
 *
 * The measure:
 *
 * 1. Vocabulary statistics. Every line becomes a set of term keys (term-keys.ts: lower-cased,
 *    plurals and spellings folded, stopwords dropped). For each key k: df(k), the number of lines
 *    holding it, and idf(k) = ln(N / df(k)). An inverted index maps keys to their lines.
 *
 * 2. Detail lines and their vocabulary. A line is a lighting, composition or quality line when its
 *    words say so (KIND_PATTERNS). The kind's vocabulary is learnt from the data: keys with at
 *    least three lines of the kind that make up a quarter or more of all their lines ("volumetric",
 *    "rim", "85mm", "intricate"). A line is offered only if all its keys belong to that vocabulary,
 *    except that a quality line may hold one "free" key, a feature of the subject ("detailed fur":
 *    "fur"), which must be associated with the subject (step 3). So "red tail lights" never
 *    reaches a cat while "detailed fur" does, and "detailed scales" reaches a dragon.
 *
 * 3. Query expansion by co-occurrence. Two queries, both expanded the same way:
 *    - the topic: seed words of the subject's class ("portrait", "face" for people; "landscape",
 *      "scenery", "nature" for landscapes), the style's and the mood's words, weight 0.4 each;
 *    - the subject: the prompt's content keys (head noun 1.5, other nouns 1, other words 0.6).
 *    A key t that shares lines with a query key q more often than chance is associated with it;
 *    the strength is normalised pointwise mutual information shrunk by its support,
 *        npmi(q,t) = ln(co·N / (df(q)·df(t))) / −ln(co / N),    a_q(t) = npmi(q,t) · co / (co + 5),
 *    counted when co ≥ 2 and npmi > 0, and a(t) = Σ_q w(q)·a_q(t). NPMI so that words that go with
 *    everything ("detailed") earn nothing special; the shrinkage so that a pair seen twice (a
 *    name, a joke) weighs less than one seen thirty times. The topic scores the vocabulary words
 *    of every line; the subject scores only free keys. (Within these short fragments a subject
 *    noun's neighbours are mostly collocations — "long hair" would promote "long shot" — so the
 *    subject reaches lighting and composition through its class, style and mood, and reaches
 *    quality terms through its own features.)
 *
 * 4. Scoring a line L: the cosine between L's binary tf-idf vector and the expanded query,
 *        cos(L) = Σ_{t∈L} a(t)·idf(t) / sqrt(Σ_{t∈L} idf(t)²),
 *    plus a popularity prior PRIOR_WEIGHT·(1 − ln(1+rank)/ln(1+N)) from the line's position in the
 *    file: other things equal, terms people use often are terms models have learnt well.
 *
 * The engine asks for the best lines of a kind, skips those repeating a word already in the prompt
 * or contradicting the scene or the medium, and lets the seed choose among the top few: relevance
 * decides what is offered, the seed only varies among close candidates.
 *
 * Lines are filtered once for names, brands, blocked terms, stray syntax and misspellings (a key
 * seen in at most 10 lines, one edit away from a key seen in 20 times as many and ending alike,
 * such as "higly"). Memory: one string per line; keys, postings and flags in flat typed arrays.
 */
import { familiesOf, MEDIUM_FAMILIES, type MediumFamily } from "./medium-families.js";
import { lineFilter } from "./modifier-lists.js";
import { classOfNoun } from "./subject-classes.js";
import { STOPWORDS, termKey, words } from "./term-keys.js";

export const DETAIL_KINDS = ["lighting", "composition", "quality"] as const;
export type DetailKind = (typeof DETAIL_KINDS)[number];

/** Weight of the popularity prior next to the cosine. */
export const PRIOR_WEIGHT = 0.25;
/** A pair of keys must share at least this many lines to count as associated. */
export const MIN_COOCCURRENCE = 2;
/** Support at which an association keeps half its strength. */
const SHRINKAGE = 5;
/** Association a free key needs for its line to be offered. */
export const FREE_KEY_MIN_ASSOCIATION = 0.2;
/** Longest line (in words) offered as a detail term. */
const MAX_DETAIL_WORDS = 5;
/** A key belongs to a kind's vocabulary with this many lines of the kind … */
const VOCAB_MIN_LINES = 3;
/** … making up at least this share of its lines. */
const VOCAB_MIN_SHARE = 0.25;

const KIND_PATTERNS: Record<DetailKind, RegExp> = {
  lighting:
    /\b(?:light|lights|lighting|lit|glow|glowing|illuminated|illumination|shadows?|sunlight|sunbeams?|moonlight|candlelight|lamplight|backlit|backlight|backlighting|rim ?light|volumetric|god ?rays|light ?rays|golden hour|blue hour|luminous|radiant|chiaroscuro|silhouetted|caustics|bloom)\b/,
  composition:
    /\b(?:shot|view|angle|close-?up|closeup|full body|wide|panorama|panoramic|symmetry|symmetrical|centered|composition|rule of thirds|depth of field|bokeh|macro|\d+ ?mm|establishing|aerial|bird'?s eye|perspective|framing|framed|fisheye|tilt[- ]shift|headshot|from above|from below|low angle|high angle|dutch angle|medium shot|long shot|profile|portrait)\b/,
  quality:
    /\b(?:detailed|detail|details|[48]k|hd|uhd|hdr|high resolution|highres|high res|masterpiece|award[- ]winning|sharp focus|high quality|best quality|intricate|ultra realistic|hyper ?realistic|professional|stunning|trending on artstation|featured on|crisp|polished)\b/,
};

/** Intensifiers and plain adjectives allowed in any detail line. */
const GENERIC_MODIFIERS = new Set(
  "very highly extremely super ultra incredibly beautiful beautifully gorgeous amazing soft strong subtle deep bright dark warm cool cold rich".split(" "),
);

/** Colours, ages and body words: a detail term must not decide these about the subject. */
const IDENTITY_KEYS = new Set(
  (
    "red orange yellow green blue purple violet pink black white gray brown golden gold silver ginger blonde blond brunette " +
    "redhead teal cyan magenta crimson scarlet emerald turquoise beige young old elderly aged teen teenage child kid baby " +
    "female male feminine masculine fat thin skinny muscular curvy slim petite chubby tall short asian african european " +
    "latin latina indian korean japanese chinese arab white-skinned dark-skinned pale tanned cute sexy pretty handsome"
  ).split(" "),
);

/** Nouns that frame or describe a picture rather than add a thing to it: allowed in detail terms. */
const PICTURE_NOUNS = new Set(["portrait", "face", "landscape", "scenery", "architecture", "interior", "character", "detail", "texture", "background"]);

/**
 * Lines fit to add as written: letters, digits, spaces, hyphens, apostrophes and ampersands only
 * ("realistic. detailed fur", "((waves" and emoji lines are fragments of other prompts' syntax),
 * and no contradictory framing ("full body shot close up").
 */
function isCleanLine(text: string): boolean {
  if (!/^[\p{L}\p{N}][\p{L}\p{N} '&-]*$/u.test(text) || / - |--/.test(text)) return false;
  return !/full ?body.*close|close.*full ?body/i.test(text);
}

export interface DetailCandidate {
  text: string;
  kind: DetailKind;
  /** Position in flavors.txt (0 = most used). */
  rank: number;
  score: number;
  keys: string[];
  /** The line's one key outside the detail vocabulary: a feature of the subject ("fur" in "detailed fur"). */
  feature: string | undefined;
  families: Set<MediumFamily>;
}

export interface RelevanceQuery {
  terms: { key: string; weight: number }[];
}

/** Association strengths a(t) for one query, by key id. */
export type Associations = Map<number, number>;

export interface IndexStats {
  lines: number;
  /** Lines that may be offered as a detail of some kind. */
  offerable: number;
  vocabulary: number;
  byKind: Record<DetailKind, number>;
  /** Keys recognised as misspellings. */
  misspellings: number;
  buildMs: number;
}

export class RelevanceIndex {
  private readonly texts: string[];
  private readonly keyStart: Int32Array;
  private readonly keyIds: Int32Array;
  private readonly vocab = new Map<string, number>();
  private readonly vocabKeys: string[] = [];
  private readonly df: Int32Array;
  private readonly idf: Float64Array;
  private readonly postStart: Int32Array;
  private readonly postLines: Int32Array;
  /** Offerable lines of each kind, in file order. */
  private readonly kindLines: Record<DetailKind, Int32Array>;
  /** The line's one key outside the detail vocabulary, or -1. */
  private readonly freeKey: Int32Array;
  private readonly familyMask: Uint16Array;
  readonly stats: IndexStats;

  /**
   * @param lines flavors.txt in file order
   * @param artists artists.txt, for the name filter
   * @param nonFeatures keys that may not be a line's free key: style and movement words
   *   ("cyberpunk highly detailed" would change the style, not detail the subject)
   */
  constructor(lines: readonly string[], artists: readonly string[], nonFeatures: Iterable<string> = []) {
    const started = performance.now();
    const n = lines.length;
    this.texts = lines.slice();
    this.keyStart = new Int32Array(n + 1);
    const ids: number[] = [];
    const dfCounts: number[] = [];
    const kindMask = new Uint8Array(n);
    const wordCounts = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const text = lines[i]!;
      this.keyStart[i] = ids.length;
      const lineWords = words(text);
      wordCounts[i] = Math.min(255, lineWords.length);
      const seen = new Set<number>();
      for (const word of lineWords) {
        const key = termKey(word);
        if (key === "" || STOPWORDS.has(key)) continue;
        let id = this.vocab.get(key);
        if (id === undefined) {
          id = this.vocabKeys.length;
          this.vocab.set(key, id);
          this.vocabKeys.push(key);
          dfCounts.push(0);
        }
        if (!seen.has(id)) {
          seen.add(id);
          ids.push(id);
          dfCounts[id]!++;
        }
      }
      if (lineWords.length <= MAX_DETAIL_WORDS && isCleanLine(text)) {
        const lower = text.toLowerCase();
        DETAIL_KINDS.forEach((kind, bit) => {
          if (KIND_PATTERNS[kind].test(lower)) kindMask[i]! |= 1 << bit;
        });
      }
    }
    this.keyStart[n] = ids.length;
    this.keyIds = Int32Array.from(ids);
    const v = this.vocabKeys.length;
    this.df = Int32Array.from(dfCounts);
    this.idf = new Float64Array(v);
    for (let k = 0; k < v; k++) this.idf[k] = Math.log(n / this.df[k]!);
    this.postStart = new Int32Array(v + 1);
    for (let k = 0; k < v; k++) this.postStart[k + 1] = this.postStart[k]! + this.df[k]!;
    this.postLines = new Int32Array(this.keyIds.length);
    const fill = this.postStart.slice(0, v);
    for (let i = 0; i < n; i++) {
      for (let p = this.keyStart[i]!; p < this.keyStart[i + 1]!; p++) this.postLines[fill[this.keyIds[p]!]!++] = i;
    }

    // Step 2: the detail vocabulary, learnt from the lines of each kind.
    const inVocabulary = new Uint8Array(v);
    const kindDf = new Int32Array(v);
    for (let bit = 0; bit < DETAIL_KINDS.length; bit++) {
      kindDf.fill(0);
      for (let i = 0; i < n; i++) {
        if ((kindMask[i]! & (1 << bit)) === 0) continue;
        for (let p = this.keyStart[i]!; p < this.keyStart[i + 1]!; p++) kindDf[this.keyIds[p]!]!++;
      }
      for (let k = 0; k < v; k++) {
        if (kindDf[k]! >= VOCAB_MIN_LINES && kindDf[k]! >= VOCAB_MIN_SHARE * this.df[k]!) inVocabulary[k] = 1;
      }
    }
    for (const key of GENERIC_MODIFIERS) {
      const id = this.vocab.get(key);
      if (id !== undefined) inVocabulary[id] = 1;
    }
    const misspelt = this.findMisspellings();
    const notFree = new Set<number>();
    for (const key of nonFeatures) {
      const id = this.vocab.get(key);
      if (id !== undefined && !inVocabulary[id]) notFree.add(id);
    }
    const filter = lineFilter(artists);
    this.freeKey = new Int32Array(n).fill(-1);
    this.familyMask = new Uint16Array(n);
    const byKind = Object.fromEntries(DETAIL_KINDS.map((kind) => [kind, [] as number[]])) as Record<DetailKind, number[]>;
    let offerable = 0;
    for (let i = 0; i < n; i++) {
      if (kindMask[i] === 0 || wordCounts[i] === 0) continue;
      let free = -1;
      let pure = true;
      for (let p = this.keyStart[i]!; p < this.keyStart[i + 1]! && pure; p++) {
        const k = this.keyIds[p]!;
        const key = this.vocabKeys[k]!;
        if (misspelt.has(k) || IDENTITY_KEYS.has(key) || (classOfNoun(key) && !PICTURE_NOUNS.has(key))) pure = false;
        else if (!inVocabulary[k]) {
          if (free >= 0 || notFree.has(k)) pure = false;
          free = k;
        }
      }
      if (!pure || filter.rejection(lines[i]!) !== undefined) continue;
      this.freeKey[i] = free;
      let families = 0;
      for (const family of familiesOf(lines[i]!)) families |= 1 << MEDIUM_FAMILIES.indexOf(family);
      this.familyMask[i] = families;
      offerable++;
      DETAIL_KINDS.forEach((kind, bit) => {
        if ((kindMask[i]! & (1 << bit)) !== 0) byKind[kind].push(i);
      });
    }
    this.kindLines = Object.fromEntries(DETAIL_KINDS.map((kind) => [kind, Int32Array.from(byKind[kind])])) as Record<DetailKind, Int32Array>;
    this.stats = {
      lines: n,
      offerable,
      vocabulary: v,
      byKind: Object.fromEntries(DETAIL_KINDS.map((kind) => [kind, byKind[kind].length])) as Record<DetailKind, number>,
      misspellings: misspelt.size,
      buildMs: Math.round(performance.now() - started),
    };
  }

  /** Number of lines containing `key` (0 when unknown). */
  documentFrequency(key: string): number {
    const id = this.vocab.get(key);
    return id === undefined ? 0 : this.df[id]!;
  }

  /** Position of the first line that reads exactly `text` (case-insensitive), or undefined. */
  rankOf(text: string): number | undefined {
    const keys = words(text).map(termKey).filter((key) => key !== "" && !STOPWORDS.has(key));
    const first = keys[0] && this.vocab.get(keys[0]);
    if (first === undefined || first === "") return undefined;
    const wanted = text.toLowerCase().trim();
    for (let p = this.postStart[first]!; p < this.postStart[first + 1]!; p++) {
      const line = this.postLines[p]!;
      if (this.texts[line]!.toLowerCase() === wanted) return line;
    }
    return undefined;
  }

  /** Association a(t) of every key with the query (step 3 of the header). */
  associations(query: RelevanceQuery): Associations {
    const n = this.texts.length;
    const assoc: Associations = new Map();
    const co = new Map<number, number>();
    for (const { key, weight } of query.terms) {
      const q = this.vocab.get(key);
      if (q === undefined || weight <= 0) continue;
      co.clear();
      for (let p = this.postStart[q]!; p < this.postStart[q + 1]!; p++) {
        const line = this.postLines[p]!;
        for (let k = this.keyStart[line]!; k < this.keyStart[line + 1]!; k++) {
          const t = this.keyIds[k]!;
          if (t !== q) co.set(t, (co.get(t) ?? 0) + 1);
        }
      }
      const dfq = this.df[q]!;
      for (const [t, count] of co) {
        if (count < MIN_COOCCURRENCE) continue;
        const npmi = Math.log((count * n) / (dfq * this.df[t]!)) / -Math.log(count / n);
        if (npmi > 0) assoc.set(t, (assoc.get(t) ?? 0) + (weight * npmi * count) / (count + SHRINKAGE));
      }
    }
    return assoc;
  }

  /** The strongest associated keys, for explanations and tests. */
  topAssociations(assoc: Associations, count: number): { key: string; weight: number }[] {
    return [...assoc]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([id, weight]) => ({ key: this.vocabKeys[id]!, weight }));
  }

  /** Adds `weight` to the association of `key` (ignored for a key the lists never use). */
  addAssociation(assoc: Associations, key: string, weight: number): void {
    const id = this.vocab.get(key);
    if (id !== undefined) assoc.set(id, (assoc.get(id) ?? 0) + weight);
  }

  /** Association of one key (0 when unknown or unrelated). */
  associationOf(assoc: Associations, key: string): number {
    const id = this.vocab.get(key);
    return id === undefined ? 0 : (assoc.get(id) ?? 0);
  }

  /** Cosine of step 4 for arbitrary text (used to rank mediums). */
  cosine(assoc: Associations, text: string): number {
    let dot = 0;
    let norm = 0;
    for (const key of new Set(words(text).map(termKey))) {
      const id = this.vocab.get(key);
      if (id === undefined || STOPWORDS.has(key)) continue;
      const idf = this.idf[id]!;
      norm += idf * idf;
      dot += (assoc.get(id) ?? 0) * idf;
    }
    return norm > 0 ? dot / Math.sqrt(norm) : 0;
  }

  /** Popularity prior of step 4 for a rank. */
  prior(rank: number): number {
    return PRIOR_WEIGHT * (1 - Math.log(1 + rank) / Math.log(1 + this.texts.length));
  }

  /**
   * The best `limit` lines of `kind`, best first. `topic` scores every key of a line; `subject`
   * only a quality line's free key, which it must associate with at least
   * FREE_KEY_MIN_ASSOCIATION. `accept` sees each candidate in score order and may refuse it
   * (repetition, scene, medium); refused ones do not count.
   */
  rank(kind: DetailKind, topic: Associations, subject: Associations, limit: number, accept: (candidate: DetailCandidate) => boolean): DetailCandidate[] {
    const scored: { line: number; score: number }[] = [];
    for (const line of this.kindLines[kind]) {
      const free = this.freeKey[line]!;
      const feature = free >= 0 ? (subject.get(free) ?? 0) : 0;
      if (free >= 0 && (kind !== "quality" || feature < FREE_KEY_MIN_ASSOCIATION)) continue;
      let dot = 0;
      let norm = 0;
      for (let k = this.keyStart[line]!; k < this.keyStart[line + 1]!; k++) {
        const t = this.keyIds[k]!;
        const idf = this.idf[t]!;
        norm += idf * idf;
        dot += ((topic.get(t) ?? 0) + (t === free ? feature : 0)) * idf;
      }
      scored.push({ line, score: (norm > 0 ? dot / Math.sqrt(norm) : 0) + this.prior(line) });
    }
    scored.sort((a, b) => b.score - a.score || a.line - b.line);
    const chosen: DetailCandidate[] = [];
    const seen = new Set<string>();
    for (const { line, score } of scored) {
      const text = this.texts[line]!.toLowerCase();
      if (seen.has(text)) continue;
      seen.add(text);
      const free = this.freeKey[line]!;
      const candidate: DetailCandidate = {
        text: this.texts[line]!,
        kind,
        rank: line,
        score,
        keys: this.keysOf(line),
        feature: free >= 0 ? this.vocabKeys[free] : undefined,
        families: this.familiesOf(line),
      };
      if (!accept(candidate)) continue;
      chosen.push(candidate);
      if (chosen.length >= limit) break;
    }
    return chosen;
  }

  private keysOf(line: number): string[] {
    const keys: string[] = [];
    for (let k = this.keyStart[line]!; k < this.keyStart[line + 1]!; k++) keys.push(this.vocabKeys[this.keyIds[k]!]!);
    return keys;
  }

  private familiesOf(line: number): Set<MediumFamily> {
    const mask = this.familyMask[line]!;
    return new Set(MEDIUM_FAMILIES.filter((_, bit) => (mask & (1 << bit)) !== 0));
  }

  /** Rare keys one edit (deletion, insertion or substitution) away from a far more common key. */
  private findMisspellings(): Set<number> {
    const variants = new Map<string, number>();
    const deletions = (key: string) => {
      const out = [key];
      for (let i = 0; i < key.length; i++) out.push(key.slice(0, i) + key.slice(i + 1));
      return out;
    };
    for (let k = 0; k < this.vocabKeys.length; k++) {
      if (this.df[k]! < 50) continue;
      for (const variant of deletions(this.vocabKeys[k]!)) {
        const known = variants.get(variant);
        if (known === undefined || this.df[known]! < this.df[k]!) variants.set(variant, k);
      }
    }
    const misspelt = new Set<number>();
    for (let k = 0; k < this.vocabKeys.length; k++) {
      const key = this.vocabKeys[k]!;
      if (this.df[k]! > 10 || key.length < 5 || /\d/.test(key)) continue;
      for (const variant of deletions(key)) {
        const near = variants.get(variant);
        // Same ending: a suffix ("shadow" → "shadowy") is a word, not a typo.
        const nearKey = near === undefined ? "" : this.vocabKeys[near]!;
        if (near !== undefined && near !== k && this.df[near]! >= 20 * this.df[k]! && nearKey.length >= 4 && nearKey.slice(-2) === key.slice(-2)) {
          misspelt.add(k);
          break;
        }
      }
    }
    return misspelt;
  }
}
