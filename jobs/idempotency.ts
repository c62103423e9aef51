/**
 * `Idempotency-Key` (IETF httpapi draft): a client's key for one request, remembered per API key
 * for a day with a fingerprint of the request, so a retry gets the same job instead of a second one.
 */
import { createHash } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import { AtelierError } from "../core/errors.js";
import { LIMITS } from "../core/limits.js";

/** How long a key stays bound to its request (the draft's suggested day). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

const { min, max } = LIMITS.idempotencyKeyCharacters;
const KEY_PATTERN = new RegExp(`^[\\x21-\\x7e]{${min},${max}}$`);

/** The header's value, checked: visible ASCII characters within the limit (quotes of a structured string dropped). */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = header.trim().replace(/^"(.*)"$/, "$1");
  if (!KEY_PATTERN.test(key)) {
    throw new AtelierError("INVALID_INPUT", `Invalid request: Idempotency-Key must be ${min} to ${max} visible ASCII characters, e.g. a UUID.`, {
      issues: [{ path: "Idempotency-Key", message: `Expected ${min} to ${max} visible ASCII characters.` }],
    });
  }
  return key;
}

/**
 * Canonical JSON, as pieces: object keys sorted, so the same body in another key order has the same
 * fingerprint. A string whose bytes `bytesOf` has (a long plain ASCII string of the request body,
 * RequestContext.bodyStringBytes) is those bytes between quotes, exactly what JSON.stringify would
 * write, without reading the string.
 */
function canonical(value: unknown, bytesOf: (text: string) => Uint8Array | undefined, pieces: (string | Uint8Array)[]): void {
  if (Array.isArray(value)) {
    pieces.push("[");
    value.forEach((item, index) => {
      if (index > 0) pieces.push(",");
      canonical(item, bytesOf, pieces);
    });
    pieces.push("]");
    return;
  }
  if (value !== null && typeof value === "object") {
    pieces.push("{");
    Object.keys(value)
      .sort()
      .forEach((key, index) => {
        pieces.push(`${index > 0 ? "," : ""}${JSON.stringify(key)}:`);
        canonical((value as Record<string, unknown>)[key], bytesOf, pieces);
      });
    pieces.push("}");
    return;
  }
  const bytes = typeof value === "string" ? bytesOf(value) : undefined;
  if (bytes) pieces.push('"', bytes, '"');
  else pieces.push(JSON.stringify(value));
}

/** Bytes hashed per turn of the event loop. */
const HASHED_PER_TURN = 1024 * 1024;

/** SHA-256 of the operation and the body's canonical JSON; a 20 MB data URL is hashed a slice per turn of the event loop. */
export async function requestFingerprint(operation: string, body: unknown, bytesOf: (text: string) => Uint8Array | undefined = () => undefined): Promise<string> {
  const pieces: (string | Uint8Array)[] = [];
  canonical(body, bytesOf, pieces);
  const hash = createHash("sha256").update(operation).update("\n");
  for (const piece of pieces) {
    if (typeof piece === "string") {
      hash.update(piece);
      continue;
    }
    for (let at = 0; at < piece.length; at += HASHED_PER_TURN) {
      hash.update(piece.subarray(at, at + HASHED_PER_TURN));
      await nextTurn();
    }
  }
  return hash.digest("hex");
}
