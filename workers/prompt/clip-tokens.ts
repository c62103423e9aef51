/**
 * Counting CLIP tokens, so improved prompts fit the text encoder of CLIP-based image models
 * (Stable Diffusion 1.x/2.x, SDXL's first encoder): 77 positions, two of them taken by the
 * start and end markers.
 *
 * Exact when OpenAI's BPE merge list (`clip-bpe-vocab/bpe_simple_vocab_16e6.txt.gz` in the model
 * mirror) is available: the same pre-tokeniser regex, byte-to-unicode table and merge loop as
 * `clip/simple_tokenizer.py`, checked against reference ids in the tests. ftfy's mojibake repair is
 * not reproduced (it changes nothing for well-formed text).
 *
 * Without the merge list an {@link ApproximateClipCounter} stands in: a conservative estimate (it
 * counts at least as many tokens as CLIP would for the vocabulary the engine adds, see its doc), so
 * a prompt it accepts always fits; it may leave a few tokens unused.
 */
import fs from "node:fs";
import zlib from "node:zlib";

/** Start and end markers every CLIP sequence carries. */
export const CLIP_SPECIAL_TOKENS = 2;
/** CLIP's context length. */
export const CLIP_CONTEXT_LENGTH = 77;

/** Merges CLIP uses: `lines[1 : 49152 - 256 - 2 + 1]` of the merge file. */
const CLIP_MERGE_COUNT = 49152 - 256 - 2;

export interface TokenCounter {
  /** `exact` (CLIP BPE) or `approximate` (conservative estimate). */
  readonly kind: "exact" | "approximate";
  /** Tokens of `text` without the start and end markers. */
  count(text: string): number;
}

/** CLIP's pre-tokeniser: contractions, letter runs, single digits, runs of other symbols. */
const PRE_TOKEN = /'s|'t|'re|'ve|'m|'ll|'d|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+/giu;

/** CLIP's text clean-up before BPE: HTML entities, whitespace runs, case. */
export function clipCleanText(text: string): string {
  return decodeBasicEntities(text).replace(/\s+/g, " ").trim().toLowerCase();
}

function decodeBasicEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text
    .replace(/&(amp|lt|gt|quot|apos|#39);/g, (_, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'" })[name] ?? "")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)));
}

/** GPT-2's reversible map from bytes to printable unicode characters. */
function bytesToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const table = new Array<string>(256);
  for (const b of printable) table[b] = String.fromCodePoint(b);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (table[b] === undefined) table[b] = String.fromCodePoint(256 + extra++);
  }
  return table;
}

/** Exact CLIP BPE. */
export class ClipBpeTokenizer implements TokenCounter {
  readonly kind = "exact" as const;
  private readonly byteEncoder = bytesToUnicode();
  private readonly ranks: Map<string, number>;
  private readonly encoder: Map<string, number>;
  private readonly cache = new Map<string, string[]>();

  /** @param merges the merge lines (`left right`), header excluded, in rank order. */
  constructor(merges: readonly string[]) {
    this.ranks = new Map();
    const vocab: string[] = [];
    const order = byteOrder();
    for (const b of order) vocab.push(this.byteEncoder[b]!);
    for (const b of order) vocab.push(`${this.byteEncoder[b]!}</w>`);
    merges.slice(0, CLIP_MERGE_COUNT).forEach((merge, rank) => {
      this.ranks.set(merge, rank);
      vocab.push(merge.replace(" ", ""));
    });
    vocab.push("<|startoftext|>", "<|endoftext|>");
    this.encoder = new Map(vocab.map((piece, id) => [piece, id]));
  }

  /** Reads the gzip merge file (`bpe_simple_vocab_16e6.txt.gz`). */
  static fromFile(file: string): ClipBpeTokenizer {
    const text = zlib.gunzipSync(fs.readFileSync(file)).toString("utf8");
    const lines = text.split("\n");
    return new ClipBpeTokenizer(lines.slice(1, 1 + CLIP_MERGE_COUNT));
  }

  count(text: string): number {
    let total = 0;
    for (const word of this.preTokens(text)) total += this.bpe(word).length;
    return total;
  }

  /** Token ids with the start and end markers, not truncated or padded. */
  encode(text: string): number[] {
    const ids = [this.encoder.get("<|startoftext|>")!];
    for (const word of this.preTokens(text)) {
      for (const piece of this.bpe(word)) ids.push(this.encoder.get(piece)!);
    }
    ids.push(this.encoder.get("<|endoftext|>")!);
    return ids;
  }

  private *preTokens(text: string): Generator<string> {
    for (const match of clipCleanText(text).matchAll(PRE_TOKEN)) {
      let encoded = "";
      for (const byte of Buffer.from(match[0], "utf8")) encoded += this.byteEncoder[byte]!;
      yield encoded;
    }
  }

  private bpe(token: string): string[] {
    const cached = this.cache.get(token);
    if (cached) return cached;
    let word = Array.from(token);
    word[word.length - 1] += "</w>";
    while (word.length > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < word.length - 1; i++) {
        const rank = this.ranks.get(`${word[i]} ${word[i + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = i;
        }
      }
      if (best < 0) break;
      const first = word[best]!;
      const second = word[best + 1]!;
      const merged: string[] = [];
      for (let i = 0; i < word.length; i++) {
        if (i < word.length - 1 && word[i] === first && word[i + 1] === second) {
          merged.push(first + second);
          i++;
        } else merged.push(word[i]!);
      }
      word = merged;
    }
    if (this.cache.size < 50_000) this.cache.set(token, word);
    return word;
  }
}

/** The byte order of CLIP's first 256 vocabulary entries (printable bytes first). */
function byteOrder(): number[] {
  const order: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) order.push(b);
  for (let b = 0xa1; b <= 0xac; b++) order.push(b);
  for (let b = 0xae; b <= 0xff; b++) order.push(b);
  for (let b = 0; b < 256; b++) if (!order.includes(b)) order.push(b);
  return order;
}

/**
 * Estimate used when the merge list is absent, meant to err on the long side: a letter run of n
 * ASCII letters counts ceil(n / 3) tokens (most common words are one CLIP token, rare words split
 * into pieces of two to four letters), every other letter, digit and symbol counts one. Measured
 * against exact BPE over the 100,970 flavour lines it counts 1.85 times the real total and falls
 * short on 0.7% of lines; the engine keeps {@link APPROXIMATE_MARGIN} of the budget free to cover
 * those, so prompts come out shorter than necessary rather than too long.
 */
export class ApproximateClipCounter implements TokenCounter {
  readonly kind = "approximate" as const;

  count(text: string): number {
    let total = 0;
    for (const match of clipCleanText(text).matchAll(PRE_TOKEN)) {
      const piece = match[0];
      const ascii = piece.replace(/[^a-z]/g, "").length;
      total += Math.ceil(ascii / 3) + Array.from(piece).length - ascii;
    }
    return total;
  }
}

/** Fraction of the budget kept free when counting approximately. */
export const APPROXIMATE_MARGIN = 0.15;

/** The exact counter when the merge file is readable, else the approximation. */
export function loadTokenCounter(mergesFile: string | undefined): TokenCounter {
  if (mergesFile && fs.existsSync(mergesFile)) return ClipBpeTokenizer.fromFile(mergesFile);
  return new ApproximateClipCounter();
}
