/**
 * The shared usage store for several routers: table `atelier_api_usage` in the PostgreSQL database
 * of the API keys (`ATELIER_DATABASE_URL`). Each router's recorder adds its batch with one
 * statement (an upsert over arrays), so routers add to the same buckets without losing counts.
 */
import pg from "pg";
import type { Logger } from "../../core/logger.js";
import { openMigratedPool } from "../../database/postgres-pool.js";
import { hourStart, type KeyUsage, type UsageExportRow, type UsageFilter, type UsageIncrement, type UsageRow, type UsageStore } from "./usage-store.js";

export const POSTGRES_USAGE_TABLE = "atelier_api_usage";
const SCHEMA_COMPONENT = "api_usage";

/** Migration N takes the schema from version N to N+1. Append, never edit. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE ${POSTGRES_USAGE_TABLE} (
     hour_start BIGINT NOT NULL,
     key_id     TEXT NOT NULL,
     operation  TEXT NOT NULL,
     status     INTEGER NOT NULL,
     requests   BIGINT NOT NULL,
     compute_ms BIGINT NOT NULL,
     PRIMARY KEY (hour_start, key_id, operation, status)
   );
   CREATE INDEX ${POSTGRES_USAGE_TABLE}_by_key ON ${POSTGRES_USAGE_TABLE} (key_id, hour_start)`,
];

/** `AND key_id = ANY($n)` for a key filter; `values` receives its parameter. */
function keyClause(filter: UsageFilter, values: unknown[]): string {
  if (filter.keyIds === undefined) return "";
  values.push([...filter.keyIds]);
  return ` AND key_id = ANY($${values.length}::text[])`;
}

/** One upsert may not touch a row twice, so increments of the same bucket are summed first. */
function mergeIncrements(increments: readonly UsageIncrement[]): UsageIncrement[] {
  const merged = new Map<string, UsageIncrement>();
  for (const row of increments) {
    const id = JSON.stringify([row.hourStartMs, row.keyId, row.operation, row.status]);
    const previous = merged.get(id);
    if (previous) {
      previous.requests += row.requests;
      previous.computeMs += row.computeMs;
    } else {
      merged.set(id, { ...row });
    }
  }
  return [...merged.values()];
}

export class PostgresUsageStore implements UsageStore {
  private constructor(private readonly pool: pg.Pool) {}

  /** Connects to `url`, creates or migrates the table; throws naming the database (never its password). */
  static async open(url: string, options: { logger?: Logger } = {}): Promise<PostgresUsageStore> {
    const pool = await openMigratedPool(url, {
      component: SCHEMA_COMPONENT,
      migrations: MIGRATIONS,
      applicationName: "atelier-usage",
      label: "usage table in",
      // Batches and console queries only: a few connections are plenty.
      maxConnections: 3,
      queryTimeoutMs: 30_000,
      logger: options.logger,
    });
    return new PostgresUsageStore(pool);
  }

  async add(increments: readonly UsageIncrement[]): Promise<void> {
    if (increments.length === 0) return;
    const rows = mergeIncrements(increments);
    await this.pool.query(
      `INSERT INTO ${POSTGRES_USAGE_TABLE} AS usage (hour_start, key_id, operation, status, requests, compute_ms)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::bigint[])
       ON CONFLICT (hour_start, key_id, operation, status)
       DO UPDATE SET requests = usage.requests + excluded.requests, compute_ms = usage.compute_ms + excluded.compute_ms`,
      [
        rows.map((row) => row.hourStartMs),
        rows.map((row) => row.keyId),
        rows.map((row) => row.operation),
        rows.map((row) => row.status),
        rows.map((row) => row.requests),
        rows.map((row) => Math.round(row.computeMs)),
      ],
    );
  }

  async aggregate(filter: UsageFilter, bucketMs: number): Promise<UsageRow[]> {
    const values: unknown[] = [bucketMs, hourStart(filter.sinceMs), filter.untilMs];
    const keys = keyClause(filter, values);
    const { rows } = await this.pool.query<UsageRow>(
      `SELECT ((hour_start / $1) * $1)::float8 AS "bucketStartMs", operation, status,
              SUM(requests)::float8 AS requests, SUM(compute_ms)::float8 AS "computeMs"
       FROM ${POSTGRES_USAGE_TABLE} WHERE hour_start >= $2 AND hour_start < $3${keys}
       GROUP BY 1, operation, status ORDER BY 1, operation, status`,
      values,
    );
    return rows;
  }

  async byKey(filter: UsageFilter, limit: number): Promise<KeyUsage[]> {
    const values: unknown[] = [hourStart(filter.sinceMs), filter.untilMs];
    const keys = keyClause(filter, values);
    values.push(limit);
    const { rows } = await this.pool.query<KeyUsage>(
      `SELECT key_id AS "keyId", SUM(requests)::float8 AS requests,
              SUM(CASE WHEN status >= 400 THEN requests ELSE 0 END)::float8 AS errors, SUM(compute_ms)::float8 AS "computeMs"
       FROM ${POSTGRES_USAGE_TABLE} WHERE hour_start >= $1 AND hour_start < $2${keys}
       GROUP BY key_id ORDER BY requests DESC, key_id LIMIT $${values.length}`,
      values,
    );
    return rows;
  }

  async exportRows(filter: UsageFilter, limit: number): Promise<UsageExportRow[]> {
    const values: unknown[] = [hourStart(filter.sinceMs), filter.untilMs];
    const keys = keyClause(filter, values);
    values.push(limit);
    const { rows } = await this.pool.query<UsageExportRow>(
      `SELECT hour_start::float8 AS "hourStartMs", key_id AS "keyId", operation, status, requests::float8 AS requests,
              compute_ms::float8 AS "computeMs"
       FROM ${POSTGRES_USAGE_TABLE} WHERE hour_start >= $1 AND hour_start < $2${keys}
       ORDER BY hour_start, key_id, operation, status LIMIT $${values.length}`,
      values,
    );
    return rows;
  }

  async prune(beforeMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(`DELETE FROM ${POSTGRES_USAGE_TABLE} WHERE hour_start < $1`, [hourStart(beforeMs)]);
    return rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
