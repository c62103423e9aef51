/**
 * Reads a JSON request body's bytes as they arrive, a chunk at a time, so that the costly parts of
 * parsing a 20 MB body (issue 19: a data URL of a 12 MP photo) never run in one block on the event
 * loop. It tracks how deep arrays and objects nest, and where the long plain strings lie: strings of
 * at least `longStringBytes` with neither escapes nor control characters, whose bytes are already
 * their value. {@link parseScannedJson} parses the body with those strings cut out (a few bytes for
 * JSON.parse instead of megabytes) and puts them back.
 *
 * Bytes are read, not characters: in UTF-8 the bytes of `"`, `\`, brackets and braces never occur
 * inside a multi-byte character, so the structure found is the text's.
 */
import { randomUUID } from "node:crypto";

interface Span {
  /** First byte of the string's content (after the opening quote). */
  start: number;
  /** The closing quote. */
  end: number;
  /** Only ASCII bytes: read as Latin-1, a plain copy, rather than decoded as UTF-8. */
  ascii: boolean;
}

export class JsonBodyScanner {
  /** Deepest nesting of arrays and objects seen. */
  maxDepth = 0;
  readonly longStrings: Span[] = [];
  private depth = 0;
  private offset = 0;
  private inString = false;
  /** The previous byte was a backslash inside a string (possibly at the end of the previous chunk). */
  private escaping = false;
  private stringStart = 0;
  private stringPlain = true;
  private stringAscii = true;

  constructor(private readonly longStringBytes: number) {}

  scan(chunk: Uint8Array): void {
    const base = this.offset;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.inString) {
        if (this.escaping) this.escaping = false;
        else if (c === 0x22) {
          this.inString = false;
          const end = base + i;
          if (this.stringPlain && end - this.stringStart >= this.longStringBytes) this.longStrings.push({ start: this.stringStart, end, ascii: this.stringAscii });
        } else if (c === 0x5c) {
          this.escaping = true;
          this.stringPlain = false;
        } else if (c < 0x20) this.stringPlain = false;
        else if (c > 0x7f) this.stringAscii = false;
      } else if (c === 0x22) {
        this.inString = true;
        this.stringStart = base + i + 1;
        this.stringPlain = true;
        this.stringAscii = true;
      } else if (c === 0x5b || c === 0x7b) {
        if (++this.depth > this.maxDepth) this.maxDepth = this.depth;
      } else if (c === 0x5d || c === 0x7d) this.depth--;
    }
    this.offset += chunk.length;
  }
}

/** Replaces, anywhere in `value`, the strings `restore` knows (values and keys, keeping key order). */
function putBack(value: unknown, restore: (text: string) => string | undefined): unknown {
  if (typeof value === "string") return restore(value) ?? value;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = putBack(value[i], restore);
    return value;
  }
  const entries = Object.entries(value).map(([key, item]) => [restore(key) ?? key, putBack(item, restore)] as const);
  // Object.fromEntries defines own properties, as JSON.parse does (a "__proto__" key stays a key).
  return Object.fromEntries(entries);
}

/**
 * JSON.parse of `body` (UTF-8, already validated, from byte `from`), with the scanner's long strings
 * cut out of the text and put back into the result; throws SyntaxError as JSON.parse does. The
 * stand-ins carry a random nonce, so no client text can be mistaken for one.
 */
export function parseScannedJson(body: Buffer, from: number, longStrings: readonly Span[]): unknown {
  const marker = `atelier-long-string:${randomUUID()}:`;
  let text = "";
  let at = from;
  longStrings.forEach((span, index) => {
    text += body.toString("utf8", at, span.start) + marker + index;
    at = span.end;
  });
  text += body.toString("utf8", at);
  return putBack(JSON.parse(text) as unknown, (candidate) => {
    if (!candidate.startsWith(marker)) return undefined;
    const span = longStrings[Number(candidate.slice(marker.length))];
    return span && body.toString(span.ascii ? "latin1" : "utf8", span.start, span.end);
  });
}
