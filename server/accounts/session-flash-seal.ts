/**
 * Sealing of a session's flash (account-store.ts): AES-256-GCM under a key derived (HKDF-SHA256)
 * from the session id itself. The storage keeps only the id's hash, so a database reader holds the
 * sealed bytes but never the key; only a request carrying the session cookie can open them.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const INFO = "atelier console session flash";
const IV_BYTES = 12;
const TAG_BYTES = 16;

function keyOf(sessionId: string): Buffer {
  return Buffer.from(hkdfSync("sha256", sessionId, Buffer.alloc(0), INFO, 32));
}

/** `iv | tag | ciphertext` of `value`. */
export function sealFlash(sessionId: string, value: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyOf(sessionId), iv);
  const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The sealed value, or null when it was not sealed for this session (or was altered). */
export function openFlash(sessionId: string, sealed: Buffer): string | null {
  if (sealed.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(sessionId), sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
