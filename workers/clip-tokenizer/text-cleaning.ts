/**
 * The text clean-up CLIP's reference tokenizer applies before splitting into words:
 * `whitespace_clean(basic_clean(text)).lower()`, where `basic_clean` is `ftfy.fix_text` then
 * `html.unescape` twice then `strip`, and `whitespace_clean` collapses runs of whitespace into one
 * space.
 *
 * Differences from the reference, both confined to unusual input: ftfy's mojibake repair is not
 * reproduced (only its default NFC normalisation is), and HTML entities are decoded for the numeric
 * forms and the common named ones below rather than Python's full HTML5 table.
 */

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  copy: "\u00a9",
  reg: "\u00ae",
  trade: "\u2122",
  hellip: "\u2026",
  mdash: "\u2014",
  ndash: "\u2013",
  lsquo: "\u2018",
  rsquo: "\u2019",
  ldquo: "\u201c",
  rdquo: "\u201d",
  deg: "\u00b0",
  times: "\u00d7",
  eacute: "\u00e9",
};

/** Named entities Python also decodes without the closing semicolon (the legacy HTML 4 ones). */
const LEGACY_WITHOUT_SEMICOLON = new Set(["amp", "lt", "gt", "quot", "nbsp", "copy", "reg", "deg", "times", "eacute"]);

const ENTITY = /&(?:#(\d+);?|#[xX]([0-9a-fA-F]+);?|([A-Za-z]+)(;?))/g;

function codePointOrReplacement(value: number): string {
  // html.unescape turns invalid and surrogate code points into U+FFFD.
  if (value === 0 || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return "\ufffd";
  return String.fromCodePoint(value);
}

/** One pass of HTML entity decoding (numeric entities and the named ones listed above). */
export function unescapeHtml(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(ENTITY, (match, decimal: string | undefined, hex: string | undefined, name: string | undefined, semicolon: string) => {
    if (decimal !== undefined) return codePointOrReplacement(Number.parseInt(decimal, 10));
    if (hex !== undefined) return codePointOrReplacement(Number.parseInt(hex, 16));
    const decoded = NAMED_ENTITIES[name!];
    if (decoded !== undefined && (semicolon === ";" || LEGACY_WITHOUT_SEMICOLON.has(name!))) return decoded;
    // Like Python: the longest prefix that is a legacy name is decoded, the rest kept ("&ampx" → "&x").
    for (let length = name!.length - 1; length >= 2; length--) {
      const prefix = name!.slice(0, length);
      if (LEGACY_WITHOUT_SEMICOLON.has(prefix)) return NAMED_ENTITIES[prefix]! + name!.slice(length) + semicolon;
    }
    return match;
  });
}

/** Reference clean-up: NFC, HTML entities decoded twice, whitespace collapsed and trimmed, lower case. */
export function cleanText(text: string): string {
  const fixed = unescapeHtml(unescapeHtml(text.normalize("NFC"))).trim();
  return fixed.replace(/\s+/gu, " ").trim().toLowerCase();
}

/**
 * The reference's word pattern: the special tokens, English contractions, runs of letters, single
 * digits, and runs of other non-space characters (punctuation, symbols, emoji).
 */
export const WORD_PATTERN = /<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+/giu;

/** The words of already-cleaned text, in order. */
export function splitWords(cleaned: string): string[] {
  return cleaned.match(WORD_PATTERN) ?? [];
}
