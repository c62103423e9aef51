/**
 * `Idempotency-Key` (IETF httpapi draft): a client's key for one request, remembered per API key
 * for a day with a fingerprint of the request, so a retry gets the same job instead of a second one.
 */
import { createHash } from "node:crypto";
import { AtelierError } from "../core/errors.js";

/** How long a key stays bound to its request (the draft's suggested day). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The header's value, checked: 1 to 255 visible ASCII characters (quotes of a structured string dropped). */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = header.trim().replace(/^"(.*)"$/, "$1");
  if (!KEY_PATTERN.test(key)) {
    throw new AtelierError("INVALID_INPUT", "Invalid request: Idempotency-Key must be 1 to 255 visible ASCII characters, e.g. a UUID.", {
      issues: [{ path: "Idempotency-Key", message: "Expected 1 to 255 visible ASCII characters." }],
    });
  }
  return key;
}

/** Canonical JSON: object keys sorted, so the same body in another key order has the same fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

export function requestFingerprint(operation: string, body: unknown): string {
  return createHash("sha256").update(operation).update("\n").update(canonical(body)).digest("hex");
}
