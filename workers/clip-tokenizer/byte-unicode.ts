/**
 * GPT-2 / CLIP byte-level alphabet: every byte 0..255 gets one printable Unicode character, so BPE
 * runs over strings of visible characters and never over whitespace or control bytes. Printable
 * Latin-1 bytes map to themselves; the other 68 bytes to U+0100 onwards, in byte order (the
 * reference `bytes_to_unicode()`).
 */

function buildTables(): { encoder: string[]; order: number[] } {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b); // "!".."~"
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b); // "¡".."¬"
  for (let b = 0xae; b <= 0xff; b++) printable.push(b); // "®".."ÿ"
  const encoder = new Array<string>(256);
  const order = [...printable];
  for (const b of printable) encoder[b] = String.fromCodePoint(b);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    if (encoder[b] !== undefined) continue;
    encoder[b] = String.fromCodePoint(256 + next++);
    order.push(b);
  }
  return { encoder, order };
}

const TABLES = buildTables();

/** Character standing for each byte value, indexed by byte. */
export const BYTE_ENCODER: readonly string[] = TABLES.encoder;

/**
 * The 256 byte characters in the reference's dictionary order (printable bytes first, then the
 * remapped ones): the first 256 entries of the CLIP vocabulary, and again with `</w>` after them.
 */
export const BYTE_ALPHABET: readonly string[] = TABLES.order.map((b) => TABLES.encoder[b]!);

const utf8 = new TextEncoder();

/** `text` as UTF-8 bytes spelt in the byte alphabet. */
export function byteEncode(text: string): string {
  let out = "";
  for (const byte of utf8.encode(text)) out += BYTE_ENCODER[byte]!;
  return out;
}
