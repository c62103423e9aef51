/**
 * The embedded usage store: table `api_usage` in `<dataDir>/atelier.db`, beside the API keys.
 * Batches arrive from the recorder every few seconds, so one transaction of upserts per batch is
 * all the writing there is.
 */
import type Database from "better-sqlite3";
import { openMigratedSqlite } from "../../database/sqlite-migrations.js";
import { hourStart, type KeyUsage, type UsageExportRow, type UsageFilter, type UsageIncrement, type UsageRow, type UsageStore } from "./usage-store.js";

const SCHEMA_COMPONENT = "api_usage";

/** Migration N takes the schema from version N to N+1. Append, never edit. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE api_usage (
     hour_start INTEGER NOT NULL,
     key_id     TEXT NOT NULL,
     operation  TEXT NOT NULL,
     status     INTEGER NOT NULL,
     requests   INTEGER NOT NULL,
     compute_ms INTEGER NOT NULL,
     PRIMARY KEY (hour_start, key_id, operation, status)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX api_usage_by_key ON api_usage (key_id, hour_start)`,
];

/** `AND key_id IN (?, ?, …)` for a key filter, with its parameters. */
function keyClause(filter: UsageFilter): { sql: string; params: string[] } {
  if (filter.keyIds === undefined) return { sql: "", params: [] };
  if (filter.keyIds.length === 0) return { sql: " AND 0", params: [] };
  return { sql: ` AND key_id IN (${filter.keyIds.map(() => "?").join(", ")})`, params: [...filter.keyIds] };
}

export class SqliteUsageStore implements UsageStore {
  private readonly upsert: Database.Statement<[number, string, string, number, number, number]>;
  private readonly addAll: (increments: readonly UsageIncrement[]) => void;

  private constructor(private readonly db: Database.Database) {
    this.upsert = db.prepare(
      `INSERT INTO api_usage (hour_start, key_id, operation, status, requests, compute_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (hour_start, key_id, operation, status)
       DO UPDATE SET requests = requests + excluded.requests, compute_ms = compute_ms + excluded.compute_ms`,
    );
    this.addAll = db.transaction((increments: readonly UsageIncrement[]) => {
      for (const row of increments) {
        this.upsert.run(row.hourStartMs, row.keyId, row.operation, row.status, row.requests, Math.round(row.computeMs));
      }
    });
  }

  /** Opens (creating if needed) and migrates `<dataDir>/atelier.db`. */
  static open(dataDir: string): SqliteUsageStore {
    return openMigratedSqlite(dataDir, { component: SCHEMA_COMPONENT, migrations: MIGRATIONS }, (db) => new SqliteUsageStore(db));
  }

  async add(increments: readonly UsageIncrement[]): Promise<void> {
    if (increments.length > 0) this.addAll(increments);
  }

  async aggregate(filter: UsageFilter, bucketMs: number): Promise<UsageRow[]> {
    const keys = keyClause(filter);
    return this.db
      .prepare<unknown[], UsageRow>(
        `SELECT hour_start - hour_start % CAST(? AS INTEGER) AS bucketStartMs, operation, status, SUM(requests) AS requests, SUM(compute_ms) AS computeMs
         FROM api_usage WHERE hour_start >= ? AND hour_start < ?${keys.sql}
         GROUP BY bucketStartMs, operation, status ORDER BY bucketStartMs, operation, status`,
      )
      // better-sqlite3 binds numbers as REAL; the cast keeps the division integral.
      .all(bucketMs, hourStart(filter.sinceMs), filter.untilMs, ...keys.params);
  }

  async byKey(filter: UsageFilter, limit: number): Promise<KeyUsage[]> {
    const keys = keyClause(filter);
    return this.db
      .prepare<unknown[], KeyUsage>(
        `SELECT key_id AS keyId, SUM(requests) AS requests, SUM(CASE WHEN status >= 400 THEN requests ELSE 0 END) AS errors,
                SUM(compute_ms) AS computeMs
         FROM api_usage WHERE hour_start >= ? AND hour_start < ?${keys.sql}
         GROUP BY key_id ORDER BY requests DESC, key_id LIMIT ?`,
      )
      .all(hourStart(filter.sinceMs), filter.untilMs, ...keys.params, limit);
  }

  async exportRows(filter: UsageFilter, limit: number): Promise<UsageExportRow[]> {
    const keys = keyClause(filter);
    return this.db
      .prepare<unknown[], UsageExportRow>(
        `SELECT hour_start AS hourStartMs, key_id AS keyId, operation, status, requests, compute_ms AS computeMs
         FROM api_usage WHERE hour_start >= ? AND hour_start < ?${keys.sql}
         ORDER BY hour_start, key_id, operation, status LIMIT ?`,
      )
      .all(hourStart(filter.sinceMs), filter.untilMs, ...keys.params, limit);
  }

  async prune(beforeMs: number): Promise<number> {
    return this.db.prepare<[number]>("DELETE FROM api_usage WHERE hour_start < ?").run(hourStart(beforeMs)).changes;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
