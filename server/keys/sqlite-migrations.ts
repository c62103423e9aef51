/**
 * Append-only schema migrations for the components that share the embedded `atelier.db` (API keys,
 * accounts): each keeps its own row in `schema_versions`, so they migrate independently.
 */
import type Database from "better-sqlite3";

/**
 * Runs the migrations of `component` that have not run yet. Migration N (0-based) takes the schema
 * from version N to N+1; append, never edit.
 */
export function migrateSqlite(db: Database.Database, component: string, migrations: readonly string[]): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_versions (
             component TEXT PRIMARY KEY,
             version   INTEGER NOT NULL
           ) STRICT`);
  const run = db.transaction(() => {
    const row = db
      .prepare<[string], { version: number }>("SELECT version FROM schema_versions WHERE component = ?")
      .get(component);
    const current = row?.version ?? 0;
    if (current > migrations.length) {
      throw new Error(
        `${component} schema is at version ${current}, newer than this build knows (${migrations.length}); upgrade the service.`,
      );
    }
    for (const migration of migrations.slice(current)) db.exec(migration);
    db.prepare(
      `INSERT INTO schema_versions (component, version) VALUES (?, ?)
       ON CONFLICT (component) DO UPDATE SET version = excluded.version`,
    ).run(component, migrations.length);
  });
  // IMMEDIATE takes the write lock up front, so two processes opening a fresh file at once
  // cannot both read version 0 and both try to create the table.
  run.immediate();
}
