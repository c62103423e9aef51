/**
 * Password hashing with Node's built-in scrypt: memory-hard (about 32 MiB per hash at the default
 * cost), a fresh 16-byte salt per password, and the parameters stored beside the hash so the cost
 * can be raised later without invalidating old hashes. No native dependency beyond Node itself.
 *
 * Stored form: `scrypt$<log2 N>$<r>$<p>$<salt, base64url>$<hash, base64url>`.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from "node:crypto";

/** Shortest password accepted, in characters (NIST SP 800-63B asks for at least 8; we ask a little more). */
export const PASSWORD_MIN_LENGTH = 10;
/** Longest password accepted, in characters: bounds the work an attacker can make one hash cost. */
export const PASSWORD_MAX_LENGTH = 256;

const LOG2_N = 15; // N = 32768, r = 8: 32 MiB and about 100 ms per hash on one core.
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

function scrypt(password: string, salt: Buffer, log2N: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** log2N, r, p, maxmem: 2 * 128 * 2 ** log2N * r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize("NFKC"), salt, HASH_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** The problem with a proposed password, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `Password must be at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (length > PASSWORD_MAX_LENGTH) return `Password must be at most ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}

/** A new stored hash of `password` with a fresh salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scrypt(password, salt, LOG2_N, BLOCK_SIZE, PARALLELISM);
  return ["scrypt", LOG2_N, BLOCK_SIZE, PARALLELISM, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

const STORED = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** True when `password` matches `stored`; false for any malformed stored value. Constant-time compare. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = STORED.exec(stored);
  if (!match) return false;
  const [, log2N, r, p, salt, hash] = match;
  const expected = Buffer.from(hash!, "base64url");
  if (Number(log2N) > 20 || expected.length !== HASH_BYTES) return false;
  const actual = await scrypt(password, Buffer.from(salt!, "base64url"), Number(log2N), Number(r), Number(p));
  return timingSafeEqual(actual, expected);
}

/**
 * A hash of no one's password, verified against when the email is unknown or the account disabled,
 * so a sign-in attempt takes the same time whether or not the account exists.
 */
let decoy: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(18).toString("base64url"));
  return decoy;
}
