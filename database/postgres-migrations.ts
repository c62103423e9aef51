/**
 * Append-only schema migrations for the components that share the PostgreSQL database (API keys,
 * accounts, usage). Each open runs the missing ones in one transaction holding an advisory lock, so
 * routers starting at once against a fresh database migrate it exactly once.
 */
import type pg from "pg";

/** One row per component with the number of its migrations that have run. */
export const POSTGRES_SCHEMA_TABLE = "atelier_schema_versions";
/** Advisory lock serialising Atelier's migrations: ASCII "atelier" read as a big-endian integer. */
const MIGRATION_LOCK_ID = "27431051700299122";

export async function migratePostgres(pool: pg.Pool, component: string, migrations: readonly string[]): Promise<void> {
  const client = await pool.connect();
  let failure: unknown;
  try {
    await client.query("BEGIN");
    // Held until COMMIT or ROLLBACK; a second router opening the same database waits here and then
    // finds the migrations done. Taken before CREATE TABLE IF NOT EXISTS, which is not safe to race.
    await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [MIGRATION_LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS ${POSTGRES_SCHEMA_TABLE} (
                          component TEXT PRIMARY KEY,
                          version   INTEGER NOT NULL
                        )`);
    const { rows } = await client.query<{ version: number }>(
      `SELECT version FROM ${POSTGRES_SCHEMA_TABLE} WHERE component = $1`,
      [component],
    );
    const current = rows[0]?.version ?? 0;
    if (current > migrations.length) {
      throw new Error(
        `${component} schema is at version ${current}, newer than this build knows (${migrations.length}); upgrade the service.`,
      );
    }
    for (const migration of migrations.slice(current)) await client.query(migration);
    await client.query(
      `INSERT INTO ${POSTGRES_SCHEMA_TABLE} (component, version) VALUES ($1, $2)
       ON CONFLICT (component) DO UPDATE SET version = excluded.version`,
      [component, migrations.length],
    );
    await client.query("COMMIT");
  } catch (error) {
    failure = error;
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    // A client that failed mid-transaction is discarded rather than returned to the pool.
    client.release(failure instanceof Error ? failure : undefined);
  }
}
