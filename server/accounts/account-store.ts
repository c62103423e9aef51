/**
 * Console accounts: users, their server-side sessions and one-time invites. The rules (validation,
 * password hashing, session expiry, single-use invites) are written once here over a small
 * storage interface; the storages are sqlite-account-storage.ts (beside the API keys in
 * atelier.db) and postgres-account-storage.ts (beside them in ATELIER_DATABASE_URL).
 *
 * Secrets never reach the storage: passwords as scrypt hashes, session ids and invite codes as
 * SHA-256 hashes (they carry 256 random bits, so a fast hash is enough).
 */
import { createHash, randomBytes } from "node:crypto";
import { openFlash, sealFlash } from "./session-flash-seal.js";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { AtelierError, type FieldIssue } from "../../core/errors.js";
import { decoyPasswordHash, hashPassword, passwordProblem, verifyPassword } from "./password-hash.js";

export const USER_ROLES = ["admin", "member"] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** A user as the service sees it; the password hash stays in the storage layer. */
export interface User {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  displayName: string;
  role: UserRole;
  createdAt: Date;
  /** Set when an admin disabled the account: it cannot sign in and its sessions are ended. */
  disabledAt: Date | null;
  /**
   * Requests per hour all this user's keys may make together, and the largest limit one key may
   * have; null: the service default for a member, none for an admin (server/quota/quota-charge.ts).
   */
  keyAllowance: number | null;
}

export interface StoredUser {
  id: string;
  email: string;
  displayName: string;
  role: UserRole;
  passwordHash: string;
  createdAtMs: number;
  disabledAtMs: number | null;
  keyAllowance: number | null;
}

export interface StoredSession {
  /** SHA-256 of the session id the cookie carries. */
  idHash: Buffer;
  userId: string;
  createdAtMs: number;
  lastSeenAtMs: number;
}

export interface StoredInvite {
  /** SHA-256 of the invite code. */
  codeHash: Buffer;
  email: string;
  role: UserRole;
  createdBy: string | null;
  createdAtMs: number;
  expiresAtMs: number;
  usedAtMs: number | null;
}

/** The rows behind the account store; each method is one atomic statement. */
export interface AccountStorage {
  /** false when the email is taken. */
  insertUser(user: StoredUser): Promise<boolean>;
  /**
   * Inserts the user only if no user exists, atomically even against other routers sharing the
   * database; false when one does.
   */
  insertFirstUser(user: StoredUser): Promise<boolean>;
  userById(id: string): Promise<StoredUser | null>;
  userByEmail(email: string): Promise<StoredUser | null>;
  listUsers(): Promise<StoredUser[]>;
  countUsers(): Promise<number>;
  /** Each returns false for an unknown id. */
  updateUser(id: string, changes: UserChanges): Promise<boolean>;
  insertSession(session: StoredSession): Promise<void>;
  sessionByHash(idHash: Buffer): Promise<StoredSession | null>;
  /** Sets lastSeenAt when it is older than `staleBeforeMs`. */
  touchSession(idHash: Buffer, nowMs: number, staleBeforeMs: number): Promise<void>;
  deleteSession(idHash: Buffer): Promise<void>;
  /** Ends every session of the user; returns how many. */
  deleteSessionsOfUser(userId: string): Promise<number>;
  /** Drops sessions last seen before `idleBeforeMs` or created before `createdBeforeMs`. */
  deleteExpiredSessions(idleBeforeMs: number, createdBeforeMs: number): Promise<number>;
  insertInvite(invite: StoredInvite): Promise<void>;
  inviteByHash(codeHash: Buffer): Promise<StoredInvite | null>;
  /** Marks the invite used when it is unused and unexpired at `nowMs`; true when this call did. */
  useInvite(codeHash: Buffer, nowMs: number): Promise<boolean>;
  /** Keeps `sealed` as the session's one flash (replacing any), until taken or `expiresAtMs`; ends with the session. */
  putFlash(sessionHash: Buffer, sealed: Buffer, expiresAtMs: number): Promise<void>;
  /** Removes the session's flash and returns it when it is unexpired at `nowMs`; null otherwise. One statement, so it is taken once. */
  takeFlash(sessionHash: Buffer, nowMs: number): Promise<Buffer | null>;
  /**
   * A rate-limiter-flexible limiter whose counters live in this database (table created on first
   * use), so every router sharing the database shares the counts: the sign-in throttle.
   */
  rateLimiter(options: RateLimiterOptions): Promise<RateLimiterAbstract>;
  close(): Promise<void>;
}

/** The fields of a stored user that can change after it is created. */
export type UserChanges = Partial<Pick<StoredUser, "displayName" | "role" | "passwordHash" | "disabledAtMs" | "keyAllowance">>;

/** The column of each {@link UserChanges} field; both storages name them alike. */
const USER_CHANGE_COLUMNS: Readonly<Record<keyof UserChanges, string>> = {
  displayName: "display_name",
  role: "role",
  passwordHash: "password_hash",
  disabledAtMs: "disabled_at",
  keyAllowance: "key_allowance",
};

/** The changes to write, as [column, value]; fields other than {@link UserChanges}' are left out. */
export function changedUserColumns(changes: UserChanges): [column: string, value: unknown][] {
  return Object.entries(changes)
    .filter(([field]) => field in USER_CHANGE_COLUMNS)
    .map(([field, value]) => [USER_CHANGE_COLUMNS[field as keyof UserChanges], value]);
}

/** What {@link AccountStorage.rateLimiter} needs: a key prefix, the budget, and its window (also the block time). */
export interface RateLimiterOptions {
  keyPrefix: string;
  points: number;
  durationSeconds: number;
}

/** rate-limiter-flexible's settings for {@link RateLimiterOptions}: a block lasts as long as the window. */
export interface LimiterSettings {
  keyPrefix: string;
  points: number;
  duration: number;
  blockDuration: number;
}

/**
 * A database-backed limiter, once it is ready: rate-limiter-flexible's store limiters create their
 * table in the background and report it through a callback, which `create` passes on.
 */
export async function readyRateLimiter<L extends RateLimiterAbstract>(
  options: RateLimiterOptions,
  create: (settings: LimiterSettings, ready: (error?: Error) => void) => L,
): Promise<L> {
  const settings = { keyPrefix: options.keyPrefix, points: options.points, duration: options.durationSeconds, blockDuration: options.durationSeconds };
  let limiter: L | undefined;
  // The callback may come before the constructor returns, so the limiter is read only afterwards.
  await new Promise<void>((resolve, reject) => {
    limiter = create(settings, (error) => (error ? reject(error) : resolve()));
  });
  return limiter!;
}

/** How long sessions live. */
export interface SessionPolicy {
  /** A session unused this long ends (milliseconds). */
  idleMs: number;
  /** A session ends this long after sign-in, however active (milliseconds). */
  absoluteMs: number;
}

export interface AccountStoreOptions {
  now?: () => number;
}

export const DISPLAY_NAME_MAX_LENGTH = 100;
export const EMAIL_MAX_LENGTH = 254;
/** An invite link works this long. */
export const INVITE_LIFETIME_MS = 7 * 24 * 3600 * 1000;
/** A flash lives long enough to follow the redirect that shows it, and no longer. */
export const FLASH_LIFETIME_MS = 2 * 60 * 1000;
/** lastSeenAt is rewritten at most this often per session. */
const SESSION_TOUCH_RESOLUTION_MS = 60_000;

// Deliberately loose: one @, no spaces, a dot in the domain. Deliverability is the operator's call.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

function newUserId(): string {
  return `usr_${randomBytes(9).toString("base64url")}`;
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

function toUser(stored: StoredUser): User {
  return {
    id: stored.id,
    email: stored.email,
    displayName: stored.displayName,
    role: stored.role,
    createdAt: new Date(stored.createdAtMs),
    disabledAt: stored.disabledAtMs === null ? null : new Date(stored.disabledAtMs),
    keyAllowance: stored.keyAllowance,
  };
}

function invalid(issues: FieldIssue[]): AtelierError {
  return new AtelierError("INVALID_INPUT", issues.map((issue) => issue.message).join(" "), { issues });
}

export interface NewUser {
  email: string;
  displayName?: string;
  password: string;
  role: UserRole;
  keyAllowance?: number | null;
}

/** A signed-in session: the user and the id the cookie carries (only ever returned at sign-in). */
export interface StartedSession {
  sessionId: string;
  user: User;
}

/** What a session cookie resolves to. */
export interface ActiveSession {
  user: User;
  /** SHA-256 of the session id, to end this one session. */
  idHash: Buffer;
  createdAt: Date;
}

export class AccountStore {
  private readonly now: () => number;

  constructor(
    private readonly storage: AccountStorage,
    private readonly sessions: SessionPolicy,
    options: AccountStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Creates a user. Throws INVALID_INPUT for a bad field or an email already in use. */
  async createUser(input: NewUser): Promise<User> {
    const stored = await this.newStoredUser(input);
    if (!(await this.storage.insertUser(stored))) {
      throw invalid([{ path: "email", message: "An account with this email already exists." }]);
    }
    return toUser(stored);
  }

  /**
   * Creates the service's first account, an admin, only if no account exists yet: of any number of
   * concurrent calls, on any router sharing the database, exactly one succeeds. Returns null when
   * an account exists. Throws INVALID_INPUT for a bad field.
   */
  async createFirstAdmin(input: Omit<NewUser, "role" | "keyAllowance">): Promise<User | null> {
    const stored = await this.newStoredUser({ ...input, role: "admin" });
    return (await this.storage.insertFirstUser(stored)) ? toUser(stored) : null;
  }

  /** The row for a new user, its fields checked and its password hashed. Throws INVALID_INPUT for a bad field. */
  private async newStoredUser(input: NewUser): Promise<StoredUser> {
    const email = normaliseEmail(input.email);
    const displayName = (input.displayName ?? "").trim() || email.split("@")[0]!;
    const issues: FieldIssue[] = [];
    if (email.length > EMAIL_MAX_LENGTH || !EMAIL_PATTERN.test(email)) issues.push({ path: "email", message: "Enter an email address like name@example.com." });
    if ([...displayName].length > DISPLAY_NAME_MAX_LENGTH || /\p{Cc}/u.test(displayName)) {
      issues.push({ path: "displayName", message: `Display name must be at most ${DISPLAY_NAME_MAX_LENGTH} characters, without control characters.` });
    }
    const badPassword = passwordProblem(input.password);
    if (badPassword) issues.push({ path: "password", message: badPassword });
    if (!USER_ROLES.includes(input.role)) issues.push({ path: "role", message: "Role must be admin or member." });
    const allowanceIssue = allowanceProblem(input.keyAllowance ?? null);
    if (allowanceIssue) issues.push(allowanceIssue);
    if (issues.length > 0) throw invalid(issues);
    return {
      id: newUserId(),
      email,
      displayName,
      role: input.role,
      passwordHash: await hashPassword(input.password),
      createdAtMs: this.now(),
      disabledAtMs: null,
      keyAllowance: input.keyAllowance ?? null,
    };
  }

  async getUser(id: string): Promise<User | null> {
    const stored = await this.storage.userById(id);
    return stored ? toUser(stored) : null;
  }

  async findUserByEmail(email: string): Promise<User | null> {
    const stored = await this.storage.userByEmail(normaliseEmail(email));
    return stored ? toUser(stored) : null;
  }

  async listUsers(): Promise<User[]> {
    return (await this.storage.listUsers()).map(toUser);
  }

  async countUsers(): Promise<number> {
    return this.storage.countUsers();
  }

  async setRole(id: string, role: UserRole): Promise<User | null> {
    if (!USER_ROLES.includes(role)) throw invalid([{ path: "role", message: "Role must be admin or member." }]);
    return (await this.storage.updateUser(id, { role })) ? this.getUser(id) : null;
  }

  async setDisplayName(id: string, displayName: string): Promise<User | null> {
    const trimmed = displayName.trim();
    if (trimmed.length === 0 || [...trimmed].length > DISPLAY_NAME_MAX_LENGTH || /\p{Cc}/u.test(trimmed)) {
      throw invalid([{ path: "displayName", message: `Display name must be 1 to ${DISPLAY_NAME_MAX_LENGTH} characters, without control characters.` }]);
    }
    return (await this.storage.updateUser(id, { displayName: trimmed })) ? this.getUser(id) : null;
  }

  async setKeyAllowance(id: string, allowance: number | null): Promise<User | null> {
    const issue = allowanceProblem(allowance);
    if (issue) throw invalid([issue]);
    return (await this.storage.updateUser(id, { keyAllowance: allowance })) ? this.getUser(id) : null;
  }

  /** Disables (or re-enables) the account; disabling ends its sessions at once. */
  async setDisabled(id: string, disabled: boolean): Promise<User | null> {
    if (!(await this.storage.updateUser(id, { disabledAtMs: disabled ? this.now() : null }))) return null;
    if (disabled) await this.storage.deleteSessionsOfUser(id);
    return this.getUser(id);
  }

  /** Sets a new password and ends every session of the user (a stolen session dies with the old password). */
  async setPassword(id: string, password: string): Promise<User | null> {
    const problem = passwordProblem(password);
    if (problem) throw invalid([{ path: "password", message: problem }]);
    if (!(await this.storage.updateUser(id, { passwordHash: await hashPassword(password) }))) return null;
    await this.storage.deleteSessionsOfUser(id);
    return this.getUser(id);
  }

  /** True when `password` is the user's current one. */
  async checkPassword(id: string, password: string): Promise<boolean> {
    const stored = await this.storage.userById(id);
    return verifyPassword(password, stored?.passwordHash ?? (await decoyPasswordHash()));
  }

  /**
   * The user for this email and password, or null. Unknown email, wrong password and disabled
   * account are indistinguishable, in the answer and in the time it takes.
   */
  async verifyCredentials(email: string, password: string): Promise<User | null> {
    const stored = await this.storage.userByEmail(normaliseEmail(email));
    const matches = await verifyPassword(password, stored?.passwordHash ?? (await decoyPasswordHash()));
    if (!stored || !matches || stored.disabledAtMs !== null) return null;
    return toUser(stored);
  }

  /** Starts a session with a fresh random id (a fixated cookie never becomes a session). */
  async startSession(userId: string): Promise<string> {
    const sessionId = randomToken();
    const now = this.now();
    await this.storage.insertSession({ idHash: sha256(sessionId), userId, createdAtMs: now, lastSeenAtMs: now });
    return sessionId;
  }

  /** The live session for a cookie value, or null (unknown, idle too long, too old, user disabled). */
  async resolveSession(sessionId: string): Promise<ActiveSession | null> {
    if (typeof sessionId !== "string" || sessionId.length === 0 || sessionId.length > 128) return null;
    const idHash = sha256(sessionId);
    const session = await this.storage.sessionByHash(idHash);
    if (!session) return null;
    const now = this.now();
    if (now - session.lastSeenAtMs > this.sessions.idleMs || now - session.createdAtMs > this.sessions.absoluteMs) {
      await this.storage.deleteSession(idHash);
      return null;
    }
    const user = await this.storage.userById(session.userId);
    if (!user || user.disabledAtMs !== null) {
      await this.storage.deleteSession(idHash);
      return null;
    }
    if (now - session.lastSeenAtMs >= SESSION_TOUCH_RESOLUTION_MS) {
      await this.storage.touchSession(idHash, now, now - SESSION_TOUCH_RESOLUTION_MS);
    }
    return { user: toUser(user), idHash, createdAt: new Date(session.createdAtMs) };
  }

  async endSession(idHash: Buffer): Promise<void> {
    await this.storage.deleteSession(idHash);
  }

  async endSessionsOfUser(userId: string): Promise<number> {
    return this.storage.deleteSessionsOfUser(userId);
  }

  /** Removes expired sessions; called now and then so the table does not grow without bound. */
  async pruneSessions(): Promise<number> {
    const now = this.now();
    return this.storage.deleteExpiredSessions(now - this.sessions.idleMs, now - this.sessions.absoluteMs);
  }

  /**
   * Keeps `value` for the session's next {@link takeFlash}: a secret a POST made, shown by the page
   * its redirect leads to. Sealed with a key derived from the session id, which the storage never
   * holds, so the stored row reveals nothing without the cookie.
   */
  async putFlash(sessionId: string, value: string): Promise<void> {
    await this.storage.putFlash(sha256(sessionId), sealFlash(sessionId, value), this.now() + FLASH_LIFETIME_MS);
  }

  /** The session's flash, once: later calls (a reload of the page) get null, as do expired ones. */
  async takeFlash(sessionId: string): Promise<string | null> {
    const sealed = await this.storage.takeFlash(sha256(sessionId), this.now());
    return sealed ? openFlash(sessionId, sealed) : null;
  }

  /** A one-time invite for `email`; returns the code (shown once, stored hashed). */
  async createInvite(email: string, role: UserRole, createdBy: string | null): Promise<{ code: string; expiresAt: Date }> {
    const normalised = normaliseEmail(email);
    if (normalised.length > EMAIL_MAX_LENGTH || !EMAIL_PATTERN.test(normalised)) {
      throw invalid([{ path: "email", message: "Enter an email address like name@example.com." }]);
    }
    if (!USER_ROLES.includes(role)) throw invalid([{ path: "role", message: "Role must be admin or member." }]);
    if (await this.storage.userByEmail(normalised)) {
      throw invalid([{ path: "email", message: "An account with this email already exists." }]);
    }
    const code = randomToken();
    const now = this.now();
    const expiresAtMs = now + INVITE_LIFETIME_MS;
    await this.storage.insertInvite({ codeHash: sha256(code), email: normalised, role, createdBy, createdAtMs: now, expiresAtMs, usedAtMs: null });
    return { code, expiresAt: new Date(expiresAtMs) };
  }

  /** The unused, unexpired invite for `code`, or null. */
  async findInvite(code: string): Promise<{ email: string; role: UserRole } | null> {
    if (typeof code !== "string" || code.length === 0 || code.length > 128) return null;
    const invite = await this.storage.inviteByHash(sha256(code));
    if (!invite || invite.usedAtMs !== null || invite.expiresAtMs <= this.now()) return null;
    return { email: invite.email, role: invite.role };
  }

  /**
   * Creates the invited user (email and role from the invite) and uses up the invite. Returns null
   * when the code is unknown, used or expired. Throws INVALID_INPUT for a bad name or password.
   */
  async acceptInvite(code: string, displayName: string, password: string): Promise<User | null> {
    const invite = await this.findInvite(code);
    if (!invite) return null;
    const problem = passwordProblem(password);
    if (problem) throw invalid([{ path: "password", message: problem }]);
    // Used before the user is created, so two tabs accepting at once make one account.
    if (!(await this.storage.useInvite(sha256(code), this.now()))) return null;
    return this.createUser({ email: invite.email, displayName, password, role: invite.role });
  }

  /** A limiter counting in the account database; see {@link AccountStorage.rateLimiter}. */
  rateLimiter(options: RateLimiterOptions): Promise<RateLimiterAbstract> {
    return this.storage.rateLimiter(options);
  }

  async close(): Promise<void> {
    await this.storage.close();
  }
}

/** Largest per-user key allowance, the same bound as a key's own limit. */
export const KEY_ALLOWANCE_MAX = 1_000_000;

function allowanceProblem(allowance: number | null): FieldIssue | null {
  if (allowance === null) return null;
  if (Number.isInteger(allowance) && allowance >= 1 && allowance <= KEY_ALLOWANCE_MAX) return null;
  return { path: "keyAllowance", message: `Key allowance must be a whole number from 1 to ${KEY_ALLOWANCE_MAX.toLocaleString("en-US")} (or unset, for the service default).` };
}
