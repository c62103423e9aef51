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
import { END_OF_WORD } from "./bpe.js";

export const START_OF_TEXT = "<|startoftext|>";
export const END_OF_TEXT = "<|endoftext|>";

/** Merges CLIP uses from the OpenAI file: `lines[1 : 49152 - 256 - 2 + 1]`. */
export const CLIP_MERGE_COUNT = 49152 - 256 - 2;

export interface BpeVocabulary {
  /** Token id of each vocabulary string. */
  ids: ReadonlyMap<string, number>;
  /** Merge rank of each `"left right"` pair. */
  ranks: ReadonlyMap<string, number>;
}

function mergeRanks(merges: readonly string[]): Map<string, number> {
  const ranks = new Map<string, number>();
  merges.forEach((merge, rank) => {
    const parts = merge.split(" ");
    if (parts.length !== 2 || parts[0] === "" || parts[1] === "") throw new Error(`Malformed BPE merge line ${rank + 2}: "${merge}"`);
    // The first occurrence wins, as with Python's dict(zip(merges, range(...))) for unique merges.
    if (!ranks.has(merge)) ranks.set(merge, rank);
  });
  return ranks;
}

/** From the text of OpenAI's `bpe_simple_vocab_16e6.txt` (already decompressed). */
export function vocabularyFromClipMerges(text: string): BpeVocabulary {
  const lines = text.split("\n");
  const merges = lines.slice(1, CLIP_MERGE_COUNT + 1);
  if (merges.length < CLIP_MERGE_COUNT) {
    throw new Error(`Expected at least ${CLIP_MERGE_COUNT} BPE merges but the file has ${merges.length}`);
  }
  const tokens = [...BYTE_ALPHABET, ...BYTE_ALPHABET.map((symbol) => symbol + END_OF_WORD), ...merges.map((merge) => merge.replace(" ", "")), START_OF_TEXT, END_OF_TEXT];
  return { ids: new Map(tokens.map((token, id) => [token, id])), ranks: mergeRanks(merges) };
}

/** From Hugging Face's `vocab.json` and `merges.txt` texts. */
export function vocabularyFromFiles(vocabJson: string, mergesText: string): BpeVocabulary {
  const parsed: unknown = JSON.parse(vocabJson);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("vocab.json is not an object of token ids");
  const ids = new Map<string, number>();
  for (const [token, id] of Object.entries(parsed)) {
    if (!Number.isInteger(id) || (id as number) < 0) throw new Error(`vocab.json: token ${JSON.stringify(token)} has id ${String(id)}`);
    ids.set(token, id as number);
  }
  const lines = mergesText.replace(/\r\n/g, "\n").trim().split("\n");
  const merges = lines.filter((line, index) => !(index === 0 && line.startsWith("#version")) && line !== "");
  return { ids, ranks: mergeRanks(merges) };
}

/** Writes the vocabulary back as `vocab.json` and `merges.txt` texts (ids and ranks in order). */
export function vocabularyToFiles(vocabulary: BpeVocabulary): { vocabJson: string; mergesText: string } {
  const vocab = Object.fromEntries([...vocabulary.ids].sort((a, b) => a[1] - b[1]));
  const merges = [...vocabulary.ranks].sort((a, b) => a[1] - b[1]).map(([pair]) => pair);
  return { vocabJson: JSON.stringify(vocab), mergesText: `#version: 0.2\n${merges.join("\n")}\n` };
}
