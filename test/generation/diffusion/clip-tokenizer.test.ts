/**
 * The CLIP BPE tokenizer against ids of the reference tokenizer (OpenAI `SimpleTokenizer` /
 * Hugging Face `CLIPTokenizer`) for published examples, its text clean-up, framing, truncation and
 * padding, and the two vocabulary sources (OpenAI merges file, vocab.json + merges.txt) agreeing.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import {
  BYTE_ALPHABET,
  BYTE_ENCODER,
  ClipTokenizer,
  cleanText,
  loadClipMergesFile,
  loadClipTokenizer,
  readTokenizerOptions,
  splitWords,
  unescapeHtml,
  vocabularyFromClipMerges,
  vocabularyFromFiles,
  vocabularyToFiles,
  type BpeVocabulary,
} from "../../../workers/clip-tokenizer/index.js";
import { clipMergesFile, hasClipMerges } from "./tiny-export.js";

describe("byte alphabet", () => {
  it("maps printable Latin-1 bytes to themselves and the rest to U+0100 onwards, in byte order", () => {
    expect(BYTE_ENCODER[0x21]).toBe("!");
    expect(BYTE_ENCODER[0x41]).toBe("A");
    expect(BYTE_ENCODER[0xff]).toBe("ÿ");
    expect(BYTE_ENCODER[0x00]).toBe("\u0100");
    // Space is the 33rd non-printable byte: GPT-2's "Ġ".
    expect(BYTE_ENCODER[0x20]).toBe("\u0120");
    expect(BYTE_ENCODER[0xad]).toBe("\u0143");
    expect(new Set(BYTE_ENCODER).size).toBe(256);
    expect(BYTE_ALPHABET.slice(0, 3)).toEqual(["!", '"', "#"]);
    expect(BYTE_ALPHABET[188]).toBe("\u0100");
  });
});

describe("text clean-up", () => {
  it.each([
    ["  A   PHOTO\tof\na  Cat  ", "a photo of a cat"],
    ["Fish &amp; Chips", "fish & chips"],
    ["double &amp;amp; escaped", "double & escaped"],
    ["&#65;&#x42; &lt;3", "ab <3"],
    ["&unknown; stays", "&unknown; stays"],
    ["Cafe\u0301", "caf\u00e9"],
    ["\u00a0non-breaking\u00a0", "non-breaking"],
  ])("cleans %j to %j", (raw, cleaned) => {
    expect(cleanText(raw)).toBe(cleaned);
  });

  it("decodes only the entities Python decodes without a semicolon", () => {
    expect(unescapeHtml("&amp &ampx &hellip &hellip;")).toBe("& &x &hellip \u2026");
  });

  it("splits words, contractions, single digits and punctuation runs like the reference pattern", () => {
    expect(splitWords("it's 2024, isn't it?! <|endoftext|>")).toEqual(["it", "'s", "2", "0", "2", "4", ",", "isn", "'t", "it", "?!", "<|endoftext|>"]);
  });
});

describe.runIf(hasClipMerges())("CLIP tokenizer", () => {
  let vocabulary: BpeVocabulary;
  let sd1: ClipTokenizer;
  beforeAll(async () => {
    vocabulary = await loadClipMergesFile(clipMergesFile);
    sd1 = new ClipTokenizer(vocabulary);
  });

  it("derives the 49,408-entry vocabulary from the first 48,894 merges", () => {
    expect(vocabulary.size).toBe(49408);
    expect(vocabulary.mergeCount).toBe(48894);
    expect(vocabulary.idOf("!")).toBe(0);
    expect(vocabulary.idOf("!</w>")).toBe(256);
    expect(vocabulary.idOf("<|startoftext|>")).toBe(49406);
    expect(vocabulary.idOf("<|endoftext|>")).toBe(49407);
    expect(vocabulary.idOf("no such token")).toBeUndefined();
    // The first merge ("i n") is entry 512.
    expect(vocabulary.idOf("in")).toBe(512);
    expect(vocabulary.tokenAt(512)).toBe("in");
    expect(vocabulary.merge(vocabulary.idOf("i")!, vocabulary.idOf("n")!)).toEqual({ rank: 0, result: 512 });
    // A word's last symbol never merges with what would follow it.
    expect(vocabulary.merge(vocabulary.idOf("a</w>")!, vocabulary.idOf("b")!)).toBeUndefined();
  });

  // Ids as the reference tokenizer gives them (openai/CLIP, transformers CLIPTokenizer), framed by 49406 … 49407.
  it.each([
    ["a photo of a cat", [320, 1125, 539, 320, 2368]],
    ["a photo of a dog", [320, 1125, 539, 320, 1929]],
    ["a photograph of an astronaut riding a horse", [320, 8853, 539, 550, 18376, 6765, 320, 4558]],
    ["hello world", [3306, 1002]],
    // Single punctuation and digits are byte symbols with </w>: 256 + their place in the byte alphabet.
    ["!", [256]],
    [",", [267]],
    [".", [269]],
    ["1234", [272, 273, 274, 275]],
    ["A Photo Of A CAT", [320, 1125, 539, 320, 2368]],
  ])("encodes %j", (text, ids) => {
    expect([...sd1.encode(text).slice(0, ids.length + 2)]).toEqual([49406, ...ids, 49407]);
  });

  it("splits contractions off and reuses the same word ids", () => {
    const ids = sd1.encodeText("it's a dog's life");
    expect(sd1.symbols("it's a dog's life")).toEqual(["it</w>", "'s</w>", "a</w>", "dog</w>", "'s</w>", "life</w>"]);
    expect(ids[1]).toBe(ids[4]);
    expect(ids[3]).toBe(1929);
  });

  it("encodes non-ASCII text through its UTF-8 bytes", () => {
    expect(sd1.symbols("café")).toEqual(["cafÃ©</w>"]);
    expect(sd1.encodeText("café").every((id) => id < 49406)).toBe(true);
  });

  it("pads with <|endoftext|> for SD 1.x and with \"!\" (0) for SD 2.x", () => {
    const sd2 = new ClipTokenizer(vocabulary, { padToken: "!" });
    expect([...sd1.encode("a photo of a cat")]).toEqual([49406, 320, 1125, 539, 320, 2368, ...new Array<number>(71).fill(49407)]);
    expect([...sd2.encode("a photo of a cat")]).toEqual([49406, 320, 1125, 539, 320, 2368, 49407, ...new Array<number>(70).fill(0)]);
    expect([...sd2.encode("")]).toEqual([49406, 49407, ...new Array<number>(75).fill(0)]);
  });

  it("truncates to 77 ids, keeping <|endoftext|> last", () => {
    const long = Array.from({ length: 100 }, () => "cat").join(" ");
    const ids = sd1.encode(long);
    expect(ids.length).toBe(77);
    expect(ids[0]).toBe(49406);
    expect([...ids.slice(1, 76)].every((id) => id === 2368)).toBe(true);
    expect(ids[76]).toBe(49407);
    expect(sd1.isTruncated(long)).toBe(true);
    expect(sd1.isTruncated(Array.from({ length: 75 }, () => "cat").join(" "))).toBe(false);
  });

  it("reads the same ids from vocab.json + merges.txt as from the merges file, with the pad token from tokenizer_config.json", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-clip-tok-"));
    try {
      const { vocabJson, mergesText } = vocabularyToFiles(vocabularyFromClipMerges(gunzipSync(fs.readFileSync(clipMergesFile)).toString("utf8")));
      fs.writeFileSync(path.join(folder, "vocab.json"), vocabJson);
      fs.writeFileSync(path.join(folder, "merges.txt"), mergesText);
      const fromFiles = vocabularyFromFiles(vocabJson, mergesText);
      expect(fromFiles.tokens()).toEqual(vocabulary.tokens());
      expect(fromFiles.merges()).toEqual(vocabulary.merges());
      expect(vocabularyToFiles(fromFiles)).toEqual({ vocabJson, mergesText });

      fs.writeFileSync(path.join(folder, "tokenizer_config.json"), JSON.stringify({ model_max_length: 77, pad_token: { __type: "AddedToken", content: "!" } }));
      expect(await readTokenizerOptions(folder)).toEqual({ padToken: "!", maxLength: 77 });
      const tokenizer = await loadClipTokenizer(folder, undefined);
      expect(tokenizer.padId).toBe(0);
      expect([...tokenizer.encode("a photograph of an astronaut riding a horse").slice(0, 11)]).toEqual([49406, 320, 8853, 539, 550, 18376, 6765, 320, 4558, 49407, 0]);

      fs.writeFileSync(path.join(folder, "tokenizer_config.json"), JSON.stringify({ model_max_length: 1e30 }));
      fs.writeFileSync(path.join(folder, "special_tokens_map.json"), JSON.stringify({ pad_token: "<|endoftext|>" }));
      expect(await readTokenizerOptions(folder)).toEqual({ padToken: "<|endoftext|>" });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("refuses vocabularies it could not encode with: a merge of unknown tokens, a missing byte symbol", () => {
    const { vocabJson, mergesText } = vocabularyToFiles(vocabulary);
    expect(() => vocabularyFromFiles(vocabJson, `${mergesText}qqq zzz\n`)).toThrow(/"qqq zzz".*not in the vocabulary/);
    const withoutA = JSON.parse(vocabJson) as Record<string, number>;
    delete withoutA["a</w>"];
    expect(() => vocabularyFromFiles(JSON.stringify(withoutA), "#version: 0.2\n")).toThrow(/lacks the byte symbol "a<\/w>"/);
  });

  it("falls back to the merges file when a model has no tokenizer folder, with the catalog's pad token", async () => {
    const tokenizer = await loadClipTokenizer(path.join(os.tmpdir(), "no-such-tokenizer-folder"), clipMergesFile, { padToken: "!" });
    expect(tokenizer.padId).toBe(0);
    await expect(loadClipTokenizer(path.join(os.tmpdir(), "no-such-tokenizer-folder"), undefined)).rejects.toThrow(/No tokenizer files/);
  });
});
