/**
 * Byte-pair encoding of one word, exactly as CLIP's reference `bpe()`: the word's last character
 * carries the end-of-word marker `</w>`, then the adjacent pair with the lowest merge rank is merged
 * everywhere, left to right, until no adjacent pair has a rank. Results are cached per word.
 */

/** Marks the last symbol of a word in CLIP's vocabulary. */
export const END_OF_WORD = "</w>";

/** Merge ranks keyed by `"left right"` (a space cannot occur inside a byte-alphabet symbol). */
export type MergeRanks = ReadonlyMap<string, number>;

export class BytePairEncoder {
  private readonly cache = new Map<string, readonly string[]>();

  /** @param ranks merge rank per pair; lower merges first. @param fixed words returned as they are (special tokens). */
  constructor(
    private readonly ranks: MergeRanks,
    fixed: readonly string[] = [],
  ) {
    for (const word of fixed) this.cache.set(word, [word]);
  }

  /** The symbols `word` (already in the byte alphabet) is split into, the last one ending in `</w>`. */
  encode(word: string): readonly string[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    const chars = Array.from(word);
    if (chars.length === 0) return [];
    let symbols = [...chars.slice(0, -1), chars[chars.length - 1]! + END_OF_WORD];
    while (symbols.length > 1) {
      let best: [string, string] | undefined;
      let bestRank = Infinity;
      for (let i = 0; i < symbols.length - 1; i++) {
        const rank = this.ranks.get(`${symbols[i]} ${symbols[i + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = [symbols[i]!, symbols[i + 1]!];
        }
      }
      if (!best) break;
      const [first, second] = best;
      const merged: string[] = [];
      for (let i = 0; i < symbols.length; ) {
        if (symbols[i] === first && i < symbols.length - 1 && symbols[i + 1] === second) {
          merged.push(first + second);
          i += 2;
        } else {
          merged.push(symbols[i]!);
          i += 1;
        }
      }
      symbols = merged;
    }
    this.cache.set(word, symbols);
    return symbols;
  }
}
