/** CLIP's byte-level BPE tokenizer, as the Stable Diffusion text encoders read prompts. */
export { BYTE_ALPHABET, BYTE_ENCODER, byteEncode } from "./byte-unicode.js";
export { BytePairEncoder } from "./bpe.js";
export { CLIP_CONTEXT_LENGTH, ClipTokenizer, type ClipTokenizerOptions } from "./clip-tokenizer.js";
export {
  CLIP_MERGE_COUNT,
  END_OF_TEXT,
  END_OF_WORD,
  START_OF_TEXT,
  vocabularyFromClipMerges,
  vocabularyFromFiles,
  vocabularyToFiles,
  type BpeVocabulary,
} from "./clip-vocabulary.js";
export { cleanText, splitWords, unescapeHtml, WORD_PATTERN } from "./text-cleaning.js";
export { hasTokenizerFiles, loadClipMergesFile, loadClipTokenizer, loadVocabularyFolder, readTokenizerOptions, TOKENIZER_FILES } from "./tokenizer-files.js";
