/**
 * The embedded account storage: tables `users`, `sessions` (with their `session_flashes`) and `invites` in `<dataDir>/atelier.db`
 * beside `api_keys` (component `accounts` in `schema_versions`).
 */
import Database from "better-sqlite3";
import { openMigratedSqlite } from "../../database/sqlite-migrations.js";
import { RateLimiterSQLite, type RateLimiterAbstract } from "rate-limiter-flexible";
import { changedUserColumns, readyRateLimiter, type AccountStorage, type RateLimiterOptions, type StoredInvite, type StoredSession, type StoredUser, type UserChanges, type UserRole } from "./account-store.js";

const SCHEMA_COMPONENT = "accounts";

/** Append, never edit. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE users (
     id            TEXT PRIMARY KEY,
     email         TEXT NOT NULL UNIQUE,
     display_name  TEXT NOT NULL,
     role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
     password_hash TEXT NOT NULL,
     created_at    INTEGER NOT NULL,
     disabled_at   INTEGER,
     key_allowance INTEGER
   ) STRICT;
   CREATE TABLE sessions (
     id_hash      BLOB PRIMARY KEY,
     user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
     created_at   INTEGER NOT NULL,
     last_seen_at INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX sessions_by_user ON sessions (user_id);
   CREATE TABLE invites (
     code_hash  BLOB PRIMARY KEY,
     email      TEXT NOT NULL,
     role       TEXT NOT NULL CHECK (role IN ('admin', 'member')),
     created_by TEXT,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     used_at    INTEGER
   ) STRICT`,
  `CREATE TABLE session_flashes (
     session_hash BLOB PRIMARY KEY REFERENCES sessions (id_hash) ON DELETE CASCADE,
     sealed       BLOB NOT NULL,
     expires_at   INTEGER NOT NULL
   ) STRICT`,
];

interface UserRow {
  id: string;
  email: string;
  display_name: string;
  role: UserRole;
  password_hash: string;
  created_at: number;
  disabled_at: number | null;
  key_allowance: number | null;
}

interface SessionRow {
  id_hash: Buffer;
  user_id: string;
  created_at: number;
  last_seen_at: number;
}

interface InviteRow {
  code_hash: Buffer;
  email: string;
  role: UserRole;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

function userFromRow(row: UserRow): StoredUser {
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    passwordHash: row.password_hash,
    createdAtMs: row.created_at,
    disabledAtMs: row.disabled_at,
    keyAllowance: row.key_allowance,
  };
}

export class SqliteAccountStorage implements AccountStorage {
  private constructor(private readonly db: Database.Database) {}

  static open(dataDir: string): SqliteAccountStorage {
    return openMigratedSqlite(
      dataDir,
      { component: SCHEMA_COMPONENT, migrations: MIGRATIONS, foreignKeys: true },
      (db) => new SqliteAccountStorage(db),
    );
  }

  async insertUser(user: StoredUser): Promise<boolean> {
    try {
      this.db
        .prepare(
          `INSERT INTO users (id, email, display_name, role, password_hash, created_at, disabled_at, key_allowance)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(user.id, user.email, user.displayName, user.role, user.passwordHash, user.createdAtMs, user.disabledAtMs, user.keyAllowance);
      return true;
    } catch (error) {
      if (error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_UNIQUE") return false;
      throw error;
    }
  }

  async insertFirstUser(user: StoredUser): Promise<boolean> {
    // One statement: SQLite takes the write lock before it reads, so no other writer slips in between.
    return (
      this.db
        .prepare(
          `INSERT INTO users (id, email, display_name, role, password_hash, created_at, disabled_at, key_allowance)
           SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM users)`,
        )
        .run(user.id, user.email, user.displayName, user.role, user.passwordHash, user.createdAtMs, user.disabledAtMs, user.keyAllowance).changes > 0
    );
  }

  async userById(id: string): Promise<StoredUser | null> {
    const row = this.db.prepare<[string], UserRow>("SELECT * FROM users WHERE id = ?").get(id);
    return row ? userFromRow(row) : null;
  }

  async userByEmail(email: string): Promise<StoredUser | null> {
    const row = this.db.prepare<[string], UserRow>("SELECT * FROM users WHERE email = ?").get(email);
    return row ? userFromRow(row) : null;
  }

  async listUsers(): Promise<StoredUser[]> {
    return this.db.prepare<[], UserRow>("SELECT * FROM users ORDER BY created_at, rowid").all().map(userFromRow);
  }

  async countUsers(): Promise<number> {
    return this.db.prepare<[], { n: number }>("SELECT count(*) AS n FROM users").get()!.n;
  }

  async updateUser(id: string, changes: UserChanges): Promise<boolean> {
    const columns = changedUserColumns(changes);
    if (columns.length === 0) return (await this.userById(id)) !== null;
    const assignments = columns.map(([column]) => `${column} = ?`).join(", ");
    return this.db.prepare(`UPDATE users SET ${assignments} WHERE id = ?`).run(...columns.map(([, value]) => value), id).changes > 0;
  }

  async insertSession(session: StoredSession): Promise<void> {
    this.db
      .prepare("INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)")
      .run(session.idHash, session.userId, session.createdAtMs, session.lastSeenAtMs);
  }

  async sessionByHash(idHash: Buffer): Promise<StoredSession | null> {
    const row = this.db.prepare<[Buffer], SessionRow>("SELECT * FROM sessions WHERE id_hash = ?").get(idHash);
    return row ? { idHash: row.id_hash, userId: row.user_id, createdAtMs: row.created_at, lastSeenAtMs: row.last_seen_at } : null;
  }

  async touchSession(idHash: Buffer, nowMs: number, staleBeforeMs: number): Promise<void> {
    this.db.prepare("UPDATE sessions SET last_seen_at = ? WHERE id_hash = ? AND last_seen_at <= ?").run(nowMs, idHash, staleBeforeMs);
  }

  async deleteSession(idHash: Buffer): Promise<void> {
    this.db.prepare("DELETE FROM sessions WHERE id_hash = ?").run(idHash);
  }

  async deleteSessionsOfUser(userId: string): Promise<number> {
    return this.db.prepare("DELETE FROM sessions WHERE user_id = ?").run(userId).changes;
  }

  async deleteExpiredSessions(idleBeforeMs: number, createdBeforeMs: number): Promise<number> {
    return this.db.prepare("DELETE FROM sessions WHERE last_seen_at < ? OR created_at < ?").run(idleBeforeMs, createdBeforeMs).changes;
  }

  async insertInvite(invite: StoredInvite): Promise<void> {
    this.db
      .prepare("INSERT INTO invites (code_hash, email, role, created_by, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(invite.codeHash, invite.email, invite.role, invite.createdBy, invite.createdAtMs, invite.expiresAtMs, invite.usedAtMs);
  }

  async inviteByHash(codeHash: Buffer): Promise<StoredInvite | null> {
    const row = this.db.prepare<[Buffer], InviteRow>("SELECT * FROM invites WHERE code_hash = ?").get(codeHash);
    return row
      ? {
          codeHash: row.code_hash,
          email: row.email,
          role: row.role,
          createdBy: row.created_by,
          createdAtMs: row.created_at,
          expiresAtMs: row.expires_at,
          usedAtMs: row.used_at,
        }
      : null;
  }

  async useInvite(codeHash: Buffer, nowMs: number): Promise<boolean> {
    return (
      this.db.prepare("UPDATE invites SET used_at = ? WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?").run(nowMs, codeHash, nowMs)
        .changes > 0
    );
  }

  async putFlash(sessionHash: Buffer, sealed: Buffer, expiresAtMs: number): Promise<void> {
    this.db
      .prepare("INSERT INTO session_flashes (session_hash, sealed, expires_at) VALUES (?, ?, ?) ON CONFLICT (session_hash) DO UPDATE SET sealed = excluded.sealed, expires_at = excluded.expires_at")
      .run(sessionHash, sealed, expiresAtMs);
  }

  async takeFlash(sessionHash: Buffer, nowMs: number): Promise<Buffer | null> {
    const row = this.db.prepare<[Buffer], { sealed: Buffer; expires_at: number }>("DELETE FROM session_flashes WHERE session_hash = ? RETURNING sealed, expires_at").get(sessionHash);
    return row && row.expires_at > nowMs ? row.sealed : null;
  }

  rateLimiter(options: RateLimiterOptions): Promise<RateLimiterAbstract> {
    return readyRateLimiter(
      options,
      (settings, ready) => new RateLimiterSQLite({ storeClient: this.db, storeType: "better-sqlite3", tableName: "login_attempts", ...settings }, ready),
    );
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
