/**
 * What an API key looks like, how it is hashed, and which names and limits are acceptable: the
 * rules every key store shares, whatever database holds the hashes.
 *
 * A key reads `atl_<id>_<secret>`. The id is public (it names the key in listings, logs and the
 * CLI); the secret is 32 random bytes. Only a SHA-256 hash of the whole key is stored, so a copy of
 * the database does not let anyone call the service.
 */
import { createHash, randomBytes } from "node:crypto";
import { AtelierError, type FieldIssue } from "../../core/errors.js";
import { API_KEY_SCOPES, isApiKeyScope } from "./api-key-scopes.js";

/** Longest key name, in characters. */
export const API_KEY_NAME_MAX_LENGTH = 100;
/** Largest per-key hourly limit. */
export const API_KEY_HOURLY_LIMIT_MAX = 1_000_000;

const KEY_PREFIX = "atl_";
// Lowercase RFC 4648 base32: no `_` (the separator) and no look-alike case pairs, so ids survive
// being read aloud or typed from a listing.
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const ID_LENGTH = 12; // 60 bits: collisions are negligible, and create() retries on one anyway.
const SECRET_BYTES = 32;
const KEY_PATTERN = /^atl_([a-z2-7]{12})_([A-Za-z0-9_-]{43})$/;

/** A fresh random key id (12 lowercase base32 characters). */
export function newKeyId(): string {
  // 256 is a multiple of 32, so masking each byte keeps every character equally likely.
  return Array.from(randomBytes(ID_LENGTH), (byte) => ID_ALPHABET[byte & 31]).join("");
}

/** A fresh full key for `id`: `atl_<id>_<43 base64url characters>`. */
export function newKey(id: string): string {
  return `${KEY_PREFIX}${id}_${randomBytes(SECRET_BYTES).toString("base64url")}`;
}

/** The id inside a well-formed key, or null. */
export function keyIdOf(presentedKey: string): string | null {
  return KEY_PATTERN.exec(presentedKey)?.[1] ?? null;
}

/**
 * SHA-256 of the whole key (32 bytes). A fast hash is right here, unlike for passwords: the secret
 * carries 256 random bits, so guessing it from a leaked hash is infeasible at any hash speed, and a
 * slow KDF would only add CPU cost to every authenticated request.
 */
export function hashKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

/**
 * Compared against when there is no stored hash (malformed key, unknown id), so every rejection
 * costs the same hash and comparison as a wrong secret.
 */
export const DECOY_HASH = hashKey(`${KEY_PREFIX}decoy`);

/** The trimmed name, or the problem with it. */
export function validateName(name: unknown): { name: string } | { issue: FieldIssue } {
  if (typeof name !== "string") return { issue: { path: "name", message: "Name must be a string." } };
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > API_KEY_NAME_MAX_LENGTH) {
    return {
      issue: { path: "name", message: `Name must be 1 to ${API_KEY_NAME_MAX_LENGTH} characters.` },
    };
  }
  // Names are printed in terminal tables; control characters would garble or spoof them.
  if (/\p{Cc}/u.test(trimmed)) {
    return { issue: { path: "name", message: "Name must not contain control characters." } };
  }
  return { name: trimmed };
}

/** The problem with an hourly limit (null is fine: the service default), or null. */
export function limitIssue(limit: unknown, field: string): FieldIssue | null {
  if (limit === null) return null;
  if (typeof limit === "number" && Number.isInteger(limit) && limit >= 1 && limit <= API_KEY_HOURLY_LIMIT_MAX) {
    return null;
  }
  return {
    path: field,
    message: `Hourly limit must be an integer from 1 to ${API_KEY_HOURLY_LIMIT_MAX.toLocaleString("en-US")} (or unset, for the service default).`,
  };
}

/** One `INVALID_INPUT` error carrying every issue. */
export function invalidInput(issues: FieldIssue[]): AtelierError {
  return new AtelierError("INVALID_INPUT", issues.map((issue) => issue.message).join(" "), { issues });
}

/** Furthest a key's expiry may lie ahead: ten years. */
export const API_KEY_MAX_LIFETIME_MS = 10 * 365 * 24 * 3600 * 1000;

/** The problem with an expiry (milliseconds since the epoch; null: never), or null. */
export function expiryIssue(expiresAtMs: number | null, nowMs: number): FieldIssue | null {
  if (expiresAtMs === null) return null;
  if (!Number.isFinite(expiresAtMs) || expiresAtMs <= nowMs) return { path: "expiresAt", message: "Expiry must be a date in the future." };
  if (expiresAtMs - nowMs > API_KEY_MAX_LIFETIME_MS) return { path: "expiresAt", message: "Expiry must be at most ten years ahead." };
  return null;
}

/** The problem with a scope list (null: every operation), or null. */
export function scopesIssue(scopes: readonly unknown[] | null): FieldIssue | null {
  if (scopes === null) return null;
  const unknown = scopes.filter((scope) => !isApiKeyScope(scope));
  if (unknown.length === 0) return null;
  return { path: "scopes", message: `Unknown scope ${unknown.map(String).join(", ")}; expected some of ${API_KEY_SCOPES.join(", ")}.` };
}
