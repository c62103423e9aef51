/**
 * CLIP's BPE vocabulary from either of its two published forms:
 *
 * - OpenAI's `bpe_simple_vocab_16e6.txt.gz` (merges only): the vocabulary is derived as the
 *   reference does it, the 256 byte symbols, the same with `</w>`, one entry per merge, then
 *   `<|startoftext|>` and `<|endoftext|>` (49,408 entries from the first 48,894 merges);
 * - Hugging Face's `vocab.json` + `merges.txt`, as found in a diffusers / Optimum export's
 *   `tokenizer/` folder.
 */
import { BYTE_ALPHABET } from "./byte-unicode.js";

export const START_OF_TEXT = "<|startoftext|>";
export const END_OF_TEXT = "<|endoftext|>";
/** Marks the last symbol of a word in CLIP's vocabulary. */
export const END_OF_WORD = "</w>";

/** Merges CLIP uses from the OpenAI file: `lines[1 : 49152 - 256 - 2 + 1]`. */
export const CLIP_MERGE_COUNT = 49152 - 256 - 2;

/** A vocabulary's tokens and merges as parsed, before {@link BpeVocabulary} lays them flat. */
interface ParsedVocabulary {
  /** Token id of each vocabulary string (for a string given twice, the last id, as a dict reads it). */
  ids: ReadonlyMap<string, number>;
  /** Merge lines in file order, `"left right"`. */
  merges: readonly string[];
}

/** Largest token id accepted: CLIP's are below 49,408; ids index a table. */
const MAX_TOKEN_ID = 1 << 20;

/** FNV-1a over the UTF-16 code units of `text`. */
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

const hashPair = (left: number, right: number) => (Math.imul(left, 0x9e3779b1) ^ Math.imul(right + 1, 0x85ebca6b)) >>> 0;

/** An open-addressing table of `count` entries: a power of two, at most half full. */
const slotsFor = (count: number) => new Int32Array(2 ** Math.max(4, Math.ceil(Math.log2(count * 2 + 1))));

/** Puts entry `index` in the first free slot from `hash` on (slots hold index + 1; 0 is free). */
function place(slots: Int32Array, hash: number, index: number): void {
  const mask = slots.length - 1;
  let slot = hash & mask;
  while (slots[slot] !== 0) slot = (slot + 1) & mask;
  slots[slot] = index + 1;
}

/**
 * A byte-level BPE vocabulary laid out flat: every token's text in one string with its offsets, and
 * open-addressing tables (typed arrays) from a text to its id and from a pair of ids to the merge that
 * joins them. It lives as long as the process (the prompt engine's token counter, the diffusion
 * pipeline's text encoders), in the router's heap where workers run in-process. As two maps keyed by
 * strings it was 98,000 objects for every full collection of that heap to visit, and the merge keys,
 * slices of the decompressed merge file, kept all 6 MB of it alive: a service's heap after start-up
 * and three style calls was 77.8 MB with them and is 65.6 MB with these tables.
 */
export class BpeVocabulary {
  /** Distinct token strings. */
  readonly size: number;
  /** Distinct merges. */
  readonly mergeCount: number;
  /** Every token string, one after another; token i spans text[start[i], start[i + 1]). */
  private readonly text: string;
  private readonly start: Int32Array;
  private readonly tokenId: Int32Array;
  /** Token index + 1 by text hash (0: empty). */
  private readonly tokenSlots: Int32Array;
  /** Token index of each id, or -1. */
  private readonly tokenOfId: Int32Array;
  private readonly mergeLeft: Int32Array;
  private readonly mergeRight: Int32Array;
  private readonly mergeRank: Int32Array;
  private readonly mergeResult: Int32Array;
  /** Merge index + 1 by pair hash (0: empty). */
  private readonly mergeSlots: Int32Array;

  private constructor({ ids, merges }: ParsedVocabulary) {
    const tokens = [...ids];
    this.size = tokens.length;
    this.text = tokens.map(([token]) => token).join("");
    this.start = new Int32Array(tokens.length + 1);
    this.tokenId = new Int32Array(tokens.length);
    this.tokenSlots = slotsFor(tokens.length);
    let maxId = -1;
    tokens.forEach(([token, id], index) => {
      if (!Number.isInteger(id) || id < 0 || id >= MAX_TOKEN_ID) throw new Error(`vocabulary: token ${JSON.stringify(token)} has id ${String(id)}`);
      this.start[index + 1] = this.start[index]! + token.length;
      this.tokenId[index] = id;
      maxId = Math.max(maxId, id);
      place(this.tokenSlots, hashText(token), index);
    });
    this.tokenOfId = new Int32Array(maxId + 1).fill(-1);
    tokens.forEach(([, id], index) => (this.tokenOfId[id] = index));

    const idOf = (token: string, line: number, merge: string) => {
      const id = this.idOf(token);
      if (id === undefined) throw new Error(`Merge line ${line} ("${merge}") joins into or from ${JSON.stringify(token)}, which is not in the vocabulary`);
      return id;
    };
    const left: number[] = [];
    const right: number[] = [];
    const ranks: number[] = [];
    const results: number[] = [];
    const seen = new Set<string>();
    merges.forEach((merge, rank) => {
      const parts = merge.split(" ");
      if (parts.length !== 2 || parts[0] === "" || parts[1] === "") throw new Error(`Malformed BPE merge line ${rank + 2}: "${merge}"`);
      // The first occurrence wins, as with Python's dict(zip(merges, range(...))) for unique merges.
      if (seen.has(merge)) return;
      seen.add(merge);
      left.push(idOf(parts[0]!, rank + 2, merge));
      right.push(idOf(parts[1]!, rank + 2, merge));
      results.push(idOf(parts[0]! + parts[1]!, rank + 2, merge));
      ranks.push(rank);
    });
    this.mergeCount = ranks.length;
    this.mergeLeft = Int32Array.from(left);
    this.mergeRight = Int32Array.from(right);
    this.mergeRank = Int32Array.from(ranks);
    this.mergeResult = Int32Array.from(results);
    this.mergeSlots = slotsFor(ranks.length);
    for (let index = 0; index < ranks.length; index++) place(this.mergeSlots, hashPair(left[index]!, right[index]!), index);
  }

  /**
   * Lays out `parsed`, refusing a vocabulary the encoder could not run on: every byte symbol, alone
   * and ending a word, must be a token, and so must both halves of every merge and what it makes.
   */
  static from(parsed: ParsedVocabulary): BpeVocabulary {
    const vocabulary = new BpeVocabulary(parsed);
    for (const symbol of [...BYTE_ALPHABET, ...BYTE_ALPHABET.map((byte) => byte + END_OF_WORD)]) {
      if (vocabulary.idOf(symbol) === undefined) throw new Error(`The vocabulary lacks the byte symbol ${JSON.stringify(symbol)}: not a byte-level BPE vocabulary`);
    }
    return vocabulary;
  }

  /** The id of `token`, or undefined. */
  idOf(token: string): number | undefined {
    const mask = this.tokenSlots.length - 1;
    for (let slot = hashText(token) & mask; this.tokenSlots[slot] !== 0; slot = (slot + 1) & mask) {
      const index = this.tokenSlots[slot]! - 1;
      if (this.matches(index, token)) return this.tokenId[index];
    }
    return undefined;
  }

  private matches(index: number, token: string): boolean {
    const from = this.start[index]!;
    if (this.start[index + 1]! - from !== token.length) return false;
    for (let i = 0; i < token.length; i++) if (this.text.charCodeAt(from + i) !== token.charCodeAt(i)) return false;
    return true;
  }

  /** The text of token `id` (undefined for an id no token has). */
  tokenAt(id: number): string | undefined {
    const index = id >= 0 && id < this.tokenOfId.length ? this.tokenOfId[id]! : -1;
    return index < 0 ? undefined : this.text.slice(this.start[index]!, this.start[index + 1]!);
  }

  /** The merge joining tokens `left` and `right`: its rank (lower merges first) and the token it makes; undefined when none does. */
  merge(left: number, right: number): { rank: number; result: number } | undefined {
    const mask = this.mergeSlots.length - 1;
    for (let slot = hashPair(left, right) & mask; this.mergeSlots[slot] !== 0; slot = (slot + 1) & mask) {
      const index = this.mergeSlots[slot]! - 1;
      if (this.mergeLeft[index] === left && this.mergeRight[index] === right) return { rank: this.mergeRank[index]!, result: this.mergeResult[index]! };
    }
    return undefined;
  }

  /** Every token and its id, in id order. */
  tokens(): [string, number][] {
    return Array.from(this.tokenId, (id, index): [string, number] => [this.text.slice(this.start[index]!, this.start[index + 1]!), id]).sort((a, b) => a[1] - b[1]);
  }

  /** The merges as `"left right"` lines, in rank order. */
  merges(): string[] {
    return Array.from(this.mergeRank.keys(), (index) => `${this.tokenAt(this.mergeLeft[index]!)} ${this.tokenAt(this.mergeRight[index]!)}`);
  }
}

/** From the text of OpenAI's `bpe_simple_vocab_16e6.txt` (already decompressed). */
export function vocabularyFromClipMerges(text: string): BpeVocabulary {
  const lines = text.split("\n");
  const merges = lines.slice(1, CLIP_MERGE_COUNT + 1);
  if (merges.length < CLIP_MERGE_COUNT) {
    throw new Error(`Expected at least ${CLIP_MERGE_COUNT} BPE merges but the file has ${merges.length}`);
  }
  const tokens = [...BYTE_ALPHABET, ...BYTE_ALPHABET.map((symbol) => symbol + END_OF_WORD), ...merges.map((merge) => merge.replace(" ", "")), START_OF_TEXT, END_OF_TEXT];
  return BpeVocabulary.from({ ids: new Map(tokens.map((token, id) => [token, id])), merges });
}

/** From Hugging Face's `vocab.json` and `merges.txt` texts. */
export function vocabularyFromFiles(vocabJson: string, mergesText: string): BpeVocabulary {
  const parsed: unknown = JSON.parse(vocabJson);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("vocab.json is not an object of token ids");
  // Ids are checked as the vocabulary is laid out.
  const ids = new Map(Object.entries(parsed as Record<string, number>));
  const lines = mergesText.replace(/\r\n/g, "\n").trim().split("\n");
  const merges = lines.filter((line, index) => !(index === 0 && line.startsWith("#version")) && line !== "");
  return BpeVocabulary.from({ ids, merges });
}

/** Writes the vocabulary back as `vocab.json` and `merges.txt` texts (ids and ranks in order). */
export function vocabularyToFiles(vocabulary: BpeVocabulary): { vocabJson: string; mergesText: string } {
  return { vocabJson: JSON.stringify(Object.fromEntries(vocabulary.tokens())), mergesText: `#version: 0.2\n${vocabulary.merges().join("\n")}\n` };
}
