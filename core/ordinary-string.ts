/**
 * The longest text the router makes in one string when it makes short-lived text a slice at a time
 * (an image's base64 written into an answer, a slice of a data URL being decoded, a long string
 * escaped into an answer). V8 keeps objects up to 128 KiB in its ordinary heap; a larger string goes
 * to the large-object space, in a mapping of its own that is faulted in afresh and collected on its
 * own, which costs many times the CPU of the same characters made as ordinary strings
 * (bench/router-body-steps.ts times the router's steps). One-byte strings carry a header of a few
 * words, hence the margin below 128 Ki characters.
 *
 * Text kept for a whole call (a body's long strings, facade/json-body-scanner.ts) is made in larger
 * pieces on purpose: ordinary strings that outlive a collection are copied out of the young
 * generation, and copying a 20 MB data URL that way blocks the event loop far longer.
 */
export const ORDINARY_STRING_CHARS = 96 * 1024;
