/**
 * API keys: the contract every key store offers, and the one implementation of it (creation,
 * constant-time authentication, listing, revocation, limits) written over a small storage
 * interface. The key format and validation live in api-key-format.ts; the storages in
 * sqlite-api-key-store.ts (embedded default) and postgres-api-key-store.ts (several routers).
 */
import { timingSafeEqual } from "node:crypto";
import { AtelierError, type FieldIssue } from "../../core/errors.js";
import { DECOY_HASH, expiryIssue, hashKey, invalidInput, keyIdOf, limitIssue, newKey, newKeyId, scopesIssue, validateName } from "./api-key-format.js";
import { API_KEY_SCOPE_LABELS, isApiKeyScope, type ApiKeyScope } from "./api-key-scopes.js";

export { API_KEY_HOURLY_LIMIT_MAX, API_KEY_NAME_MAX_LENGTH } from "./api-key-format.js";

/** One API key as the service sees it; the secret itself is never part of a record. */
export interface ApiKeyRecord {
  /** Public identifier, the `<id>` part of the key. */
  id: string;
  /** Who or what the key is for, as the operator named it. */
  name: string;
  createdAt: Date;
  /** Last successful authentication, kept to about a minute's precision; null if never used. */
  lastUsedAt: Date | null;
  /** Requests per hour for this key; null means the service default (`quota.defaultLimit`). */
  hourlyLimit: number | null;
  /** When the key was revoked; a revoked key never authenticates again. */
  revokedAt: Date | null;
  /** The console user who owns the key; null for keys made with the keys CLI (the operator's). */
  ownerId: string | null;
  /** The operations the key may call; null: every operation. */
  scopes: ApiKeyScope[] | null;
  /** After this the key is refused with `KEY_EXPIRED`; null: it does not expire. */
  expiresAt: Date | null;
  /** The operation (tRPC path, e.g. `prompt.improve`) of the last recorded use; null if never used. */
  lastUsedOperation: string | null;
}

/** Whether a key can still authenticate: neither revoked nor past its expiry at `nowMs`. */
export function isActiveKey(record: Pick<ApiKeyRecord, "revokedAt" | "expiresAt">, nowMs: number): boolean {
  return record.revokedAt === null && (record.expiresAt === null || record.expiresAt.getTime() > nowMs);
}

/** The hourly request limit that applies to a key: its own, else the service's default. */
export function effectiveHourlyLimit(record: Pick<ApiKeyRecord, "hourlyLimit">, defaultLimit: number): number {
  return record.hourlyLimit ?? defaultLimit;
}

/** What it takes to create a key. */
export interface NewApiKey {
  name: string;
  /** Omitted or null: the service default applies. */
  hourlyLimit?: number | null;
  /** Omitted or null: a CLI key, owned by the operator. */
  ownerId?: string | null;
  /**
   * With `ownerId`: the most active keys ({@link isActiveKey}) the owner may have. The key is made
   * only while they have fewer, checked atomically with the insert; otherwise INVALID_INPUT.
   */
  ownerMaxActiveKeys?: number;
  /** Omitted, null or empty: every operation. */
  scopes?: ApiKeyScope[] | null;
  /** Omitted or null: never expires. Must lie in the future. */
  expiresAt?: Date | null;
}

/** Which keys {@link ApiKeyStore.list} returns. */
export interface ApiKeyFilter {
  /** Only this user's keys. */
  ownerId?: string;
}

/** The result of {@link ApiKeyStore.create}: the only time the full key is available. */
export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The full key (`atl_<id>_<secret>`); it cannot be recovered later. */
  key: string;
}

/**
 * Where API keys live. Methods are async so a networked backend (PostgreSQL) implements the same
 * contract as the embedded SQLite one.
 */
export interface ApiKeyStore {
  /**
   * Creates a key. Throws {@link AtelierError} `INVALID_INPUT` for a bad name or limit, or an
   * owner at `ownerMaxActiveKeys`. The returned `key` is the only copy of the secret.
   */
  create(input: NewApiKey): Promise<CreatedApiKey>;
  /**
   * The key's record when `presentedKey` is a well-formed, known, unrevoked key; otherwise null.
   * Throws {@link AtelierError} `KEY_EXPIRED` for a genuine key past its expiry, and
   * `KEY_SCOPE_DENIED` when `operation` is given and not among the key's scopes (such a refusal is
   * not recorded as a use). Records the use
   * in `lastUsedAt` and `lastUsedOperation` (at most about once a minute per key, and whenever the
   * operation changes).
   */
  authenticate(presentedKey: string, operation?: string): Promise<ApiKeyRecord | null>;
  /** Every key (or the filter's), revoked ones included, oldest first. */
  list(filter?: ApiKeyFilter): Promise<ApiKeyRecord[]>;
  /** Renames the key; the updated record, or null for an unknown id. Throws INVALID_INPUT for a bad name. */
  rename(id: string, name: string): Promise<ApiKeyRecord | null>;
  /** The key with this id, or null. */
  get(id: string): Promise<ApiKeyRecord | null>;
  /** Revokes the key; true when this call revoked it, false when it is unknown or already revoked. */
  revoke(id: string): Promise<boolean>;
  /**
   * Sets the key's hourly limit (null: back to the service default). Returns the updated record,
   * or null for an unknown id. Throws {@link AtelierError} `INVALID_INPUT` for a bad limit.
   */
  setHourlyLimit(id: string, limit: number | null): Promise<ApiKeyRecord | null>;
  /** Releases the store; no other method may be called afterwards. */
  close(): Promise<void>;
}

/** `lastUsedAt` is rewritten only when it is at least this old, so hot keys do not write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// Storage: what a database has to do for the shared logic below

/** A key as stored: the hash, never the key; times in milliseconds since the epoch. */
export interface StoredApiKey {
  id: string;
  name: string;
  /** SHA-256 of the whole key, 32 bytes. */
  keyHash: Buffer;
  createdAtMs: number;
  lastUsedAtMs: number | null;
  hourlyLimit: number | null;
  revokedAtMs: number | null;
  ownerId: string | null;
  scopes: ApiKeyScope[] | null;
  expiresAtMs: number | null;
  lastUsedOperation: string | null;
}

/** A condition on an insert: the key's owner has fewer than `maxActive` keys unrevoked and unexpired at `nowMs`. */
export interface OwnerKeyCap {
  maxActive: number;
  nowMs: number;
}

/** What {@link ApiKeyStorage.insert} did: `id-taken` (the caller draws another id), `owner-at-cap` (the {@link OwnerKeyCap} did not hold). */
export type InsertOutcome = "inserted" | "id-taken" | "owner-at-cap";

/**
 * The rows behind a key store. Each method is atomic on its own; every condition that protects
 * against other processes (the lastUsedAt age, "not yet revoked", an owner's key cap) is evaluated
 * in the database, not in code.
 */
export interface ApiKeyStorage {
  /** Inserts a new, unused, unrevoked key, when `ownerCap` (if given) holds for its owner. */
  insert(key: Omit<StoredApiKey, "lastUsedAtMs" | "revokedAtMs" | "lastUsedOperation">, ownerCap?: OwnerKeyCap): Promise<InsertOutcome>;
  get(id: string): Promise<StoredApiKey | null>;
  /** Every key (or one owner's) by creation time, insertion order among equal times. */
  list(ownerId?: string): Promise<StoredApiKey[]>;
  /**
   * Sets lastUsedAt to `nowMs` and lastUsedOperation to `operation` when lastUsedAt is unset or at
   * most `staleBeforeMs`, or the operation differs; true when it did.
   */
  touch(id: string, nowMs: number, staleBeforeMs: number, operation: string | null): Promise<boolean>;
  /** false for an unknown id. */
  rename(id: string, name: string): Promise<boolean>;
  /** Sets revokedAt when unset; true when it did. */
  revoke(id: string, nowMs: number): Promise<boolean>;
  /** false for an unknown id. */
  setHourlyLimit(id: string, limit: number | null): Promise<boolean>;
  close(): Promise<void>;
}

/** Options shared by every key store. */
export interface ApiKeyStoreOptions {
  /** Milliseconds since the epoch; tests pass a fake clock. */
  now?: () => number;
}

function toRecord(key: StoredApiKey): ApiKeyRecord {
  return {
    id: key.id,
    name: key.name,
    createdAt: new Date(key.createdAtMs),
    lastUsedAt: key.lastUsedAtMs === null ? null : new Date(key.lastUsedAtMs),
    hourlyLimit: key.hourlyLimit,
    revokedAt: key.revokedAtMs === null ? null : new Date(key.revokedAtMs),
    ownerId: key.ownerId,
    scopes: key.scopes,
    expiresAt: key.expiresAtMs === null ? null : new Date(key.expiresAtMs),
    lastUsedOperation: key.lastUsedOperation,
  };
}

/** How often create() draws a new id after a clash before giving up (60-bit ids: never, in practice). */
const ID_ATTEMPTS = 4;

/** {@link ApiKeyStore} over any {@link ApiKeyStorage}: the key rules, written once. */
export class StorageBackedApiKeyStore implements ApiKeyStore {
  private readonly now: () => number;

  constructor(
    private readonly storage: ApiKeyStorage,
    options: ApiKeyStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  async create(input: NewApiKey): Promise<CreatedApiKey> {
    const issues: FieldIssue[] = [];
    const validName = validateName(input.name);
    if ("issue" in validName) issues.push(validName.issue);
    const hourlyLimit = input.hourlyLimit ?? null;
    const badLimit = limitIssue(hourlyLimit, "hourlyLimit");
    if (badLimit) issues.push(badLimit);
    const scopes = input.scopes && input.scopes.length > 0 ? [...new Set(input.scopes)] : null;
    const badScopes = scopesIssue(scopes);
    if (badScopes) issues.push(badScopes);
    const createdAtMs = this.now();
    const expiresAtMs = input.expiresAt ? input.expiresAt.getTime() : null;
    const badExpiry = expiryIssue(expiresAtMs, createdAtMs);
    if (badExpiry) issues.push(badExpiry);
    if (issues.length > 0 || "issue" in validName) throw invalidInput(issues);

    const ownerId = input.ownerId ?? null;
    const ownerCap = ownerId !== null && input.ownerMaxActiveKeys !== undefined ? { maxActive: input.ownerMaxActiveKeys, nowMs: createdAtMs } : undefined;
    for (let attempt = 1; attempt <= ID_ATTEMPTS; attempt++) {
      const id = newKeyId();
      const key = newKey(id);
      const stored = { id, name: validName.name, keyHash: hashKey(key), createdAtMs, hourlyLimit, ownerId, scopes, expiresAtMs };
      const outcome = await this.storage.insert(stored, ownerCap);
      if (outcome === "id-taken") continue;
      if (outcome === "owner-at-cap") {
        throw invalidInput([{ path: "", message: `You have ${ownerCap!.maxActive} active keys, the most one user may have. Revoke a key you no longer use to create another.` }]);
      }
      return { record: toRecord({ ...stored, lastUsedAtMs: null, revokedAtMs: null, lastUsedOperation: null }), key };
    }
    throw new Error(`Could not find a free API key id in ${ID_ATTEMPTS} attempts.`);
  }

  async authenticate(presentedKey: string, operation?: string): Promise<ApiKeyRecord | null> {
    if (typeof presentedKey !== "string") return null;
    // Hash and compare on every path; only the format check (public knowledge) decides whether
    // the database is consulted, and nothing distinguishes an unknown id from a wrong secret.
    const presentedHash = hashKey(presentedKey);
    const id = keyIdOf(presentedKey);
    const stored = id === null ? null : await this.storage.get(id);
    const storedHash = stored && stored.keyHash.length === DECOY_HASH.length ? stored.keyHash : DECOY_HASH;
    const hashesMatch = timingSafeEqual(presentedHash, storedHash);
    if (!stored || storedHash === DECOY_HASH || !hashesMatch || stored.revokedAtMs !== null) return null;

    const now = this.now();
    if (stored.expiresAtMs !== null && stored.expiresAtMs <= now) {
      throw new AtelierError(
        "KEY_EXPIRED",
        `The API key expired at ${new Date(stored.expiresAtMs).toISOString()}. Create a new key in the console's API keys area.`,
      );
    }
    if (operation !== undefined && stored.scopes !== null && !stored.scopes.some((scope) => scope === operation)) {
      const called = isApiKeyScope(operation) ? API_KEY_SCOPE_LABELS[operation] : operation;
      throw new AtelierError(
        "KEY_SCOPE_DENIED",
        `This API key may not call ${called}; its scopes are ${stored.scopes.join(", ")}. Use a key with that scope, or one without scopes.`,
      );
    }
    const staleBefore = now - LAST_USED_RESOLUTION_MS;
    const recordedOperation = operation ?? stored.lastUsedOperation;
    if (stored.lastUsedAtMs === null || stored.lastUsedAtMs <= staleBefore || recordedOperation !== stored.lastUsedOperation) {
      // false: another process touched it a moment ago; report what the table holds.
      if (await this.storage.touch(stored.id, now, staleBefore, recordedOperation)) {
        stored.lastUsedAtMs = now;
        stored.lastUsedOperation = recordedOperation;
      } else {
        const current = await this.storage.get(stored.id);
        stored.lastUsedAtMs = current?.lastUsedAtMs ?? now;
        stored.lastUsedOperation = current?.lastUsedOperation ?? recordedOperation;
      }
    }
    return toRecord(stored);
  }

  async list(filter: ApiKeyFilter = {}): Promise<ApiKeyRecord[]> {
    return (await this.storage.list(filter.ownerId)).map(toRecord);
  }

  async rename(id: string, name: string): Promise<ApiKeyRecord | null> {
    const validName = validateName(name);
    if ("issue" in validName) throw invalidInput([validName.issue]);
    if (!(await this.storage.rename(id, validName.name))) return null;
    return this.get(id);
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const stored = await this.storage.get(id);
    return stored ? toRecord(stored) : null;
  }

  async revoke(id: string): Promise<boolean> {
    return this.storage.revoke(id, this.now());
  }

  async setHourlyLimit(id: string, limit: number | null): Promise<ApiKeyRecord | null> {
    const badLimit = limitIssue(limit, "hourlyLimit");
    if (badLimit) throw invalidInput([badLimit]);
    if (!(await this.storage.setHourlyLimit(id, limit))) return null;
    return this.get(id);
  }

  async close(): Promise<void> {
    await this.storage.close();
  }
}
