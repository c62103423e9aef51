/**
 * The embedded `atelier.db` shared by the API keys, accounts and usage: opening it, and each
 * component's append-only schema migrations (each keeps its own row in `schema_versions`, so they
 * migrate independently).
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/** The database file inside the data folder, shared by the embedded stores. */
export const DATABASE_FILE_NAME = "atelier.db";

/** The component being opened (see {@link migrateSqlite}). */
export interface SqliteComponent {
  component: string;
  migrations: readonly string[];
  /** Enforce REFERENCES clauses on this connection; default off (SQLite's own default). */
  foreignKeys?: boolean;
}

/**
 * Opens `<dataDir>/atelier.db` (creating the folder and file if needed) in WAL mode, runs the
 * component's missing migrations and hands the connection to `wrap`; the connection is closed
 * again when any of that fails.
 */
export function openMigratedSqlite<T>(dataDir: string, schema: SqliteComponent, wrap: (db: Database.Database) => T): T {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, DATABASE_FILE_NAME));
  try {
    db.pragma("journal_mode = WAL");
    // The CLIs and the server share the file; wait briefly for the other's write lock.
    db.pragma("busy_timeout = 5000");
    if (schema.foreignKeys) db.pragma("foreign_keys = ON");
    migrateSqlite(db, schema.component, schema.migrations);
    return wrap(db);
  } catch (error) {
    db.close();
    throw error;
  }
}

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
