/**
 * CLIP's text tokenizer as Stable Diffusion's text encoders expect it: clean the text, split it into
 * words, BPE each word over its UTF-8 bytes, then frame the ids as `<|startoftext|> … <|endoftext|>`,
 * truncated and padded to the context length (77). Matches OpenAI's `SimpleTokenizer` and Hugging
 * Face's `CLIPTokenizer(padding="max_length", truncation=True)` (see text-cleaning.ts for the two
 * clean-up differences on unusual input).
 */
import { BytePairEncoder } from "./bpe.js";
import { byteEncode } from "./byte-unicode.js";
import { END_OF_TEXT, START_OF_TEXT, type BpeVocabulary } from "./clip-vocabulary.js";
import { cleanText, splitWords } from "./text-cleaning.js";

/** CLIP's context length: every text encoder of SD 1.x / 2.x reads exactly 77 ids. */
export const CLIP_CONTEXT_LENGTH = 77;

export interface ClipTokenizerOptions {
  /** Ids per sequence, special tokens included; default 77. */
  maxLength?: number;
  /**
   * Token that fills the sequence after `<|endoftext|>`: `"<|endoftext|>"` (49407, SD 1.x, the
   * default) or `"!"` (0, SD 2.x, whose tokenizer config says so).
   */
  padToken?: string;
}

export class ClipTokenizer {
  readonly startId: number;
  readonly endId: number;
  readonly padId: number;
  readonly maxLength: number;
  private readonly encoder: BytePairEncoder;

  constructor(
    private readonly vocabulary: BpeVocabulary,
    options: ClipTokenizerOptions = {},
  ) {
    this.maxLength = options.maxLength ?? CLIP_CONTEXT_LENGTH;
    if (!Number.isInteger(this.maxLength) || this.maxLength < 2) {
      throw new RangeError(`Expected integer of at least 2 for maxLength but received ${this.maxLength}`);
    }
    this.startId = this.idOf(START_OF_TEXT);
    this.endId = this.idOf(END_OF_TEXT);
    const padToken = options.padToken ?? END_OF_TEXT;
    // The pad token is a vocabulary entry as written ("!" is id 0, not the word "!</w>").
    this.padId = this.idOf(padToken);
    this.encoder = new BytePairEncoder(vocabulary, [START_OF_TEXT, END_OF_TEXT]);
  }

  private idOf(token: string): number {
    const id = this.vocabulary.idOf(token);
    if (id === undefined) throw new Error(`The CLIP vocabulary has no token ${JSON.stringify(token)}`);
    return id;
  }

  /** The BPE symbols of `text`, without start, end or padding (for inspection and tests). */
  symbols(text: string): string[] {
    return this.encodeText(text).map((id) => this.vocabulary.tokenAt(id)!);
  }

  /** Token ids of `text`, without start, end or padding. */
  encodeText(text: string): number[] {
    const ids: number[] = [];
    for (const word of splitWords(cleanText(text))) {
      const encoded = word === START_OF_TEXT || word === END_OF_TEXT ? word : byteEncode(word);
      ids.push(...this.encoder.encode(encoded));
    }
    return ids;
  }

  /**
   * `[<|startoftext|>, …ids, <|endoftext|>, pad…]`, exactly `maxLength` ids: text beyond
   * `maxLength - 2` ids is cut, and the sequence always ends its text with `<|endoftext|>`.
   */
  encode(text: string): Int32Array {
    const ids = new Int32Array(this.maxLength).fill(this.padId);
    const body = this.encodeText(text).slice(0, this.maxLength - 2);
    ids[0] = this.startId;
    ids.set(body, 1);
    ids[body.length + 1] = this.endId;
    return ids;
  }

  /** Whether `text` is longer than one sequence holds (the rest is ignored by {@link encode}). */
  isTruncated(text: string): boolean {
    return this.encodeText(text).length > this.maxLength - 2;
  }
}
