/**
 * The shared account storage for several routers: tables `atelier_users`, `atelier_sessions` (with
 * their `atelier_session_flashes`) and `atelier_invites` in the PostgreSQL database of the API keys
 * (`ATELIER_DATABASE_URL`).
 */
import pg from "pg";
import type { Logger } from "../../core/logger.js";
import { isDatabaseUnreachable, openMigratedPool, queryReachable } from "../../database/postgres-pool.js";
import { storeUnavailable } from "../../database/store-unavailable.js";
import { RateLimiterPostgres, type RateLimiterAbstract } from "rate-limiter-flexible";
import { changedUserColumns, readyRateLimiter, type AccountStorage, type RateLimiterOptions, type StoredInvite, type StoredSession, type StoredUser, type UserChanges, type UserRole } from "./account-store.js";

const SCHEMA_COMPONENT = "accounts";

/** Append, never edit. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE atelier_users (
     id            TEXT PRIMARY KEY,
     email         TEXT NOT NULL UNIQUE,
     display_name  TEXT NOT NULL,
     role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
     password_hash TEXT NOT NULL,
     created_at    TIMESTAMPTZ NOT NULL,
     disabled_at   TIMESTAMPTZ,
     key_allowance INTEGER,
     created_seq   BIGINT GENERATED ALWAYS AS IDENTITY
   );
   CREATE TABLE atelier_sessions (
     id_hash      BYTEA PRIMARY KEY,
     user_id      TEXT NOT NULL REFERENCES atelier_users (id) ON DELETE CASCADE,
     created_at   TIMESTAMPTZ NOT NULL,
     last_seen_at TIMESTAMPTZ NOT NULL
   );
   CREATE INDEX atelier_sessions_by_user ON atelier_sessions (user_id);
   CREATE TABLE atelier_invites (
     code_hash  BYTEA PRIMARY KEY,
     email      TEXT NOT NULL,
     role       TEXT NOT NULL CHECK (role IN ('admin', 'member')),
     created_by TEXT,
     created_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL,
     used_at    TIMESTAMPTZ
   )`,
  `CREATE TABLE atelier_session_flashes (
     session_hash BYTEA PRIMARY KEY REFERENCES atelier_sessions (id_hash) ON DELETE CASCADE,
     sealed       BYTEA NOT NULL,
     expires_at   TIMESTAMPTZ NOT NULL
   )`,
];

interface UserRow {
  id: string;
  email: string;
  display_name: string;
  role: UserRole;
  password_hash: string;
  created_at: Date;
  disabled_at: Date | null;
  key_allowance: number | null;
}

function userFromRow(row: UserRow): StoredUser {
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    passwordHash: row.password_hash,
    createdAtMs: row.created_at.getTime(),
    disabledAtMs: row.disabled_at?.getTime() ?? null,
    keyAllowance: row.key_allowance,
  };
}

const USER_SELECT = "SELECT id, email, display_name, role, password_hash, created_at, disabled_at, key_allowance FROM atelier_users";

const date = (ms: number | null) => (ms === null ? null : new Date(ms));

export class PostgresAccountStorage implements AccountStorage {
  private constructor(private readonly pool: pg.Pool) {}

  static async open(url: string, options: { logger?: Logger } = {}): Promise<PostgresAccountStorage> {
    const pool = await openMigratedPool(url, {
      component: SCHEMA_COMPONENT,
      migrations: MIGRATIONS,
      applicationName: "atelier-accounts",
      label: "account database",
      maxConnections: 5,
      queryTimeoutMs: 5_000,
      logger: options.logger,
    });
    return new PostgresAccountStorage(pool);
  }

  private query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return queryReachable<R>(this.pool, "accounts", text, values);
  }

  async insertUser(user: StoredUser): Promise<boolean> {
    const { rowCount } = await this.query(
      `INSERT INTO atelier_users (id, email, display_name, role, password_hash, created_at, disabled_at, key_allowance)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (email) DO NOTHING`,
      [user.id, user.email, user.displayName, user.role, user.passwordHash, new Date(user.createdAtMs), date(user.disabledAtMs), user.keyAllowance],
    );
    return rowCount === 1;
  }

  /**
   * Under READ COMMITTED two routers could both find the table empty and both insert, so the check
   * and the insert run in one transaction holding a lock that admits one writer of the table at a time.
   */
  async insertFirstUser(user: StoredUser): Promise<boolean> {
    let client: pg.PoolClient | undefined;
    let failure: unknown;
    try {
      client = await this.pool.connect();
      await client.query("BEGIN");
      await client.query("LOCK TABLE atelier_users IN SHARE ROW EXCLUSIVE MODE");
      const { rowCount } = await client.query(
        `INSERT INTO atelier_users (id, email, display_name, role, password_hash, created_at, disabled_at, key_allowance)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE NOT EXISTS (SELECT 1 FROM atelier_users)`,
        [user.id, user.email, user.displayName, user.role, user.passwordHash, new Date(user.createdAtMs), date(user.disabledAtMs), user.keyAllowance],
      );
      await client.query("COMMIT");
      return rowCount === 1;
    } catch (error) {
      failure = error;
      await client?.query("ROLLBACK").catch(() => undefined);
      if (isDatabaseUnreachable(error)) throw storeUnavailable("accounts", error);
      throw error;
    } finally {
      // A connection that failed mid-transaction is dropped rather than handed to the next query.
      client?.release(failure !== undefined);
    }
  }

  async userById(id: string): Promise<StoredUser | null> {
    const { rows } = await this.query<UserRow>(`${USER_SELECT} WHERE id = $1`, [id]);
    return rows[0] ? userFromRow(rows[0]) : null;
  }

  async userByEmail(email: string): Promise<StoredUser | null> {
    const { rows } = await this.query<UserRow>(`${USER_SELECT} WHERE email = $1`, [email]);
    return rows[0] ? userFromRow(rows[0]) : null;
  }

  async listUsers(): Promise<StoredUser[]> {
    const { rows } = await this.query<UserRow>(`${USER_SELECT} ORDER BY created_at, created_seq`, []);
    return rows.map(userFromRow);
  }

  async countUsers(): Promise<number> {
    const { rows } = await this.query<{ n: number }>("SELECT count(*)::int AS n FROM atelier_users", []);
    return rows[0]!.n;
  }

  async updateUser(id: string, changes: UserChanges): Promise<boolean> {
    const columns = changedUserColumns(changes);
    if (columns.length === 0) return (await this.userById(id)) !== null;
    const assignments = columns.map(([column], index) => `${column} = $${index + 2}`).join(", ");
    const values = columns.map(([column, value]) => (column === "disabled_at" ? date(value as number | null) : value));
    const { rowCount } = await this.query(`UPDATE atelier_users SET ${assignments} WHERE id = $1`, [id, ...values]);
    return rowCount === 1;
  }

  async insertSession(session: StoredSession): Promise<void> {
    await this.query("INSERT INTO atelier_sessions (id_hash, user_id, created_at, last_seen_at) VALUES ($1, $2, $3, $4)", [
      session.idHash,
      session.userId,
      new Date(session.createdAtMs),
      new Date(session.lastSeenAtMs),
    ]);
  }

  async sessionByHash(idHash: Buffer): Promise<StoredSession | null> {
    const { rows } = await this.query<{ id_hash: Buffer; user_id: string; created_at: Date; last_seen_at: Date }>(
      "SELECT id_hash, user_id, created_at, last_seen_at FROM atelier_sessions WHERE id_hash = $1",
      [idHash],
    );
    const row = rows[0];
    return row ? { idHash: row.id_hash, userId: row.user_id, createdAtMs: row.created_at.getTime(), lastSeenAtMs: row.last_seen_at.getTime() } : null;
  }

  async touchSession(idHash: Buffer, nowMs: number, staleBeforeMs: number): Promise<void> {
    await this.query("UPDATE atelier_sessions SET last_seen_at = $1 WHERE id_hash = $2 AND last_seen_at <= $3", [new Date(nowMs), idHash, new Date(staleBeforeMs)]);
  }

  async deleteSession(idHash: Buffer): Promise<void> {
    await this.query("DELETE FROM atelier_sessions WHERE id_hash = $1", [idHash]);
  }

  async deleteSessionsOfUser(userId: string): Promise<number> {
    return (await this.query("DELETE FROM atelier_sessions WHERE user_id = $1", [userId])).rowCount ?? 0;
  }

  async deleteExpiredSessions(idleBeforeMs: number, createdBeforeMs: number): Promise<number> {
    return (await this.query("DELETE FROM atelier_sessions WHERE last_seen_at < $1 OR created_at < $2", [new Date(idleBeforeMs), new Date(createdBeforeMs)])).rowCount ?? 0;
  }

  async insertInvite(invite: StoredInvite): Promise<void> {
    await this.query(
      "INSERT INTO atelier_invites (code_hash, email, role, created_by, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      [invite.codeHash, invite.email, invite.role, invite.createdBy, new Date(invite.createdAtMs), new Date(invite.expiresAtMs), date(invite.usedAtMs)],
    );
  }

  async inviteByHash(codeHash: Buffer): Promise<StoredInvite | null> {
    const { rows } = await this.query<{ code_hash: Buffer; email: string; role: UserRole; created_by: string | null; created_at: Date; expires_at: Date; used_at: Date | null }>(
      "SELECT code_hash, email, role, created_by, created_at, expires_at, used_at FROM atelier_invites WHERE code_hash = $1",
      [codeHash],
    );
    const row = rows[0];
    return row
      ? {
          codeHash: row.code_hash,
          email: row.email,
          role: row.role,
          createdBy: row.created_by,
          createdAtMs: row.created_at.getTime(),
          expiresAtMs: row.expires_at.getTime(),
          usedAtMs: row.used_at?.getTime() ?? null,
        }
      : null;
  }

  async useInvite(codeHash: Buffer, nowMs: number): Promise<boolean> {
    const { rowCount } = await this.query(
      "UPDATE atelier_invites SET used_at = $1 WHERE code_hash = $2 AND used_at IS NULL AND expires_at > $1",
      [new Date(nowMs), codeHash],
    );
    return rowCount === 1;
  }

  async putFlash(sessionHash: Buffer, sealed: Buffer, expiresAtMs: number): Promise<void> {
    await this.query(
      `INSERT INTO atelier_session_flashes (session_hash, sealed, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (session_hash) DO UPDATE SET sealed = EXCLUDED.sealed, expires_at = EXCLUDED.expires_at`,
      [sessionHash, sealed, new Date(expiresAtMs)],
    );
  }

  async takeFlash(sessionHash: Buffer, nowMs: number): Promise<Buffer | null> {
    const { rows } = await this.query<{ sealed: Buffer; expires_at: Date }>("DELETE FROM atelier_session_flashes WHERE session_hash = $1 RETURNING sealed, expires_at", [sessionHash]);
    const row = rows[0];
    return row && row.expires_at.getTime() > nowMs ? row.sealed : null;
  }

  rateLimiter(options: RateLimiterOptions): Promise<RateLimiterAbstract> {
    return readyRateLimiter(
      options,
      (settings, ready) => new RateLimiterPostgres({ storeClient: this.pool, tableName: "atelier_login_attempts", ...settings }, ready),
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
