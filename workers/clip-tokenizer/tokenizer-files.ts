/**
 * Loads a CLIP tokenizer from files: a diffusers / Optimum `tokenizer/` folder (`vocab.json`,
 * `merges.txt`, and `tokenizer_config.json` / `special_tokens_map.json` for the pad token and the
 * context length), or OpenAI's `bpe_simple_vocab_16e6.txt.gz` when a model ships no tokenizer of
 * its own. Vocabularies are parsed once per file set and shared.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { ClipTokenizer, type ClipTokenizerOptions } from "./clip-tokenizer.js";
import { vocabularyFromClipMerges, vocabularyFromFiles, type BpeVocabulary } from "./clip-vocabulary.js";

/** Files of a Hugging Face tokenizer folder. */
export const TOKENIZER_FILES = {
  vocab: "vocab.json",
  merges: "merges.txt",
  config: "tokenizer_config.json",
  specialTokens: "special_tokens_map.json",
} as const;

const vocabularies = new Map<string, Promise<BpeVocabulary>>();

function cached(key: string, load: () => Promise<BpeVocabulary>): Promise<BpeVocabulary> {
  let vocabulary = vocabularies.get(key);
  if (!vocabulary) {
    vocabulary = load();
    vocabularies.set(key, vocabulary);
    // A failed read is not remembered: the next call tries again.
    vocabulary.catch(() => vocabularies.delete(key));
  }
  return vocabulary;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  if (!(await exists(file))) return undefined;
  const parsed: unknown = JSON.parse(await fs.readFile(file, "utf8"));
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}

/** A token as tokenizer configs write it: a string, or an AddedToken object with `content`. */
function tokenContent(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && typeof (value as { content?: unknown }).content === "string") {
    return (value as { content: string }).content;
  }
  return undefined;
}

/**
 * Pad token and context length from a tokenizer folder's configs (`tokenizer_config.json` first,
 * then `special_tokens_map.json`); fields they do not give are left out.
 */
export async function readTokenizerOptions(folder: string): Promise<ClipTokenizerOptions> {
  const config = await readJson(path.join(folder, TOKENIZER_FILES.config));
  const special = await readJson(path.join(folder, TOKENIZER_FILES.specialTokens));
  const options: ClipTokenizerOptions = {};
  const padToken = tokenContent(config?.pad_token) ?? tokenContent(special?.pad_token);
  if (padToken !== undefined) options.padToken = padToken;
  const maxLength = config?.model_max_length;
  // Some configs carry a huge sentinel (1e30) meaning "no limit"; CLIP's 77 then stays.
  if (typeof maxLength === "number" && Number.isInteger(maxLength) && maxLength >= 2 && maxLength <= 1024) options.maxLength = maxLength;
  return options;
}

/** Whether `folder` holds a Hugging Face BPE tokenizer (`vocab.json` and `merges.txt`). */
export async function hasTokenizerFiles(folder: string): Promise<boolean> {
  return (await exists(path.join(folder, TOKENIZER_FILES.vocab))) && (await exists(path.join(folder, TOKENIZER_FILES.merges)));
}

/** The vocabulary of a Hugging Face tokenizer folder. */
export function loadVocabularyFolder(folder: string): Promise<BpeVocabulary> {
  const resolved = path.resolve(folder);
  return cached(`folder:${resolved}`, async () =>
    vocabularyFromFiles(
      await fs.readFile(path.join(resolved, TOKENIZER_FILES.vocab), "utf8"),
      await fs.readFile(path.join(resolved, TOKENIZER_FILES.merges), "utf8"),
    ),
  );
}

/** The vocabulary derived from OpenAI's `bpe_simple_vocab_16e6.txt.gz`. */
export function loadClipMergesFile(file: string): Promise<BpeVocabulary> {
  const resolved = path.resolve(file);
  return cached(`merges:${resolved}`, async () => vocabularyFromClipMerges(gunzipSync(await fs.readFile(resolved)).toString("utf8")));
}

/**
 * The tokenizer of a model: its own `tokenizer/` folder when it has one, else the OpenAI merges file
 * `fallbackMerges`; `defaults` (from the catalog) apply where the folder's configs are silent.
 */
export async function loadClipTokenizer(folder: string, fallbackMerges: string | undefined, defaults: ClipTokenizerOptions = {}): Promise<ClipTokenizer> {
  if (await hasTokenizerFiles(folder)) {
    const options = { ...defaults, ...(await readTokenizerOptions(folder)) };
    return new ClipTokenizer(await loadVocabularyFolder(folder), options);
  }
  if (fallbackMerges === undefined) throw new Error(`No tokenizer files (${TOKENIZER_FILES.vocab}, ${TOKENIZER_FILES.merges}) in ${folder}`);
  return new ClipTokenizer(await loadClipMergesFile(fallbackMerges), defaults);
}
