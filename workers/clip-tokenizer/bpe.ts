/**
 * Byte-pair encoding of one word, exactly as CLIP's reference `bpe()`: the word's last character
 * carries the end-of-word marker `</w>`, then the adjacent pair with the lowest merge rank is merged
 * everywhere, left to right, until no adjacent pair has a rank. It runs on token ids (the vocabulary's
 * tables, clip-vocabulary.ts): each symbol is a token from the start, a byte symbol, and every merge
 * makes one. Results are cached per word.
 */
import { END_OF_WORD, type BpeVocabulary } from "./clip-vocabulary.js";

/**
 * Words whose tokens are remembered. A service's prompts bring new words without end; past this many
 * the cache starts again rather than growing with them (a word costs a few microseconds to encode).
 */
const CACHED_WORDS = 16_384;

export class BytePairEncoder {
  private readonly cache = new Map<string, readonly number[]>();

  /** @param fixed words that are one token as they are (special tokens). */
  constructor(
    private readonly vocabulary: BpeVocabulary,
    private readonly fixed: readonly string[] = [],
  ) {}

  /** The token ids `word` (already in the byte alphabet) is split into, the last token ending in `</w>`. */
  encode(word: string): readonly number[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    const tokens = this.fixed.includes(word) ? [this.idOf(word)] : this.merged(word);
    if (this.cache.size >= CACHED_WORDS) this.cache.clear();
    this.cache.set(word, tokens);
    return tokens;
  }

  private idOf(symbol: string): number {
    const id = this.vocabulary.idOf(symbol);
    // BpeVocabulary.from has every byte symbol; a word here is spelt in them.
    if (id === undefined) throw new Error(`The symbol ${JSON.stringify(symbol)} is not in the vocabulary (is the word in the byte alphabet?)`);
    return id;
  }

  private merged(word: string): number[] {
    const chars = Array.from(word);
    if (chars.length === 0) return [];
    let symbols = chars.map((char, i) => this.idOf(i === chars.length - 1 ? char + END_OF_WORD : char));
    while (symbols.length > 1) {
      let best: { rank: number; result: number } | undefined;
      let first = -1;
      let second = -1;
      for (let i = 0; i < symbols.length - 1; i++) {
        const merge = this.vocabulary.merge(symbols[i]!, symbols[i + 1]!);
        if (merge !== undefined && (best === undefined || merge.rank < best.rank)) {
          best = merge;
          first = symbols[i]!;
          second = symbols[i + 1]!;
        }
      }
      if (!best) break;
      const merged: number[] = [];
      for (let i = 0; i < symbols.length; ) {
        if (symbols[i] === first && i < symbols.length - 1 && symbols[i + 1] === second) {
          merged.push(best.result);
          i += 2;
        } else {
          merged.push(symbols[i]!);
          i += 1;
        }
      }
      symbols = merged;
    }
    return symbols;
  }
}
