/**
 * The embedded quota store: counters in `<dataDir>/quota.db` (SQLite, WAL mode), which survive a
 * restart. Each step is one IMMEDIATE transaction, which takes the database's write lock before it
 * reads: a step sees no other step half done, from this process or any other opening the file.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { CountingQuotaStore, type CounterName, type CounterReading, type CounterStep, type QuotaCounters, type QuotaStore } from "./quota-store.js";

export const QUOTA_DATABASE_FILE = "quota.db";

interface WindowRow {
  count: number;
  ends_at: number;
}

const nameOf = (counter: CounterName) => `${counter.kind}:${counter.id}`;

function openCounters(dataDir: string, windowSeconds: number): QuotaCounters {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, QUOTA_DATABASE_FILE));
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  // One row per counter (`<kind>:<id>`); `ends_at` in milliseconds since the epoch.
  db.exec(`CREATE TABLE IF NOT EXISTS quota_windows (
    name    TEXT PRIMARY KEY,
    count   INTEGER NOT NULL,
    ends_at INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID`);
  const windowMs = windowSeconds * 1000;
  const select = db.prepare<[string], WindowRow>("SELECT count, ends_at FROM quota_windows WHERE name = ?");
  const start = db.prepare<[string, number]>(
    "INSERT INTO quota_windows (name, count, ends_at) VALUES (?, 1, ?) ON CONFLICT (name) DO UPDATE SET count = 1, ends_at = excluded.ends_at",
  );
  const increment = db.prepare<[string]>("UPDATE quota_windows SET count = count + 1 WHERE name = ?");
  const decrement = db.prepare<[string, number]>("UPDATE quota_windows SET count = count - 1 WHERE name = ? AND ends_at > ? AND count > 0");
  // Windows that ended are only ever overwritten; dropping them on open keeps the table to live ones.
  db.prepare<[number]>("DELETE FROM quota_windows WHERE ends_at <= ?").run(Date.now());

  const step = db.transaction((change: CounterStep, nowMs: number) => {
    const live = (name: string) => {
      const row = select.get(name);
      return row && row.ends_at > nowMs ? row : undefined;
    };
    const add = change.add ?? [];
    const takeBack = change.takeBack ?? [];
    const applied = add.every((counter) => (live(nameOf(counter))?.count ?? 0) < counter.limit);
    if (applied) {
      for (const counter of add) {
        const name = nameOf(counter);
        if (live(name)) increment.run(name);
        else start.run(name, nowMs + windowMs);
      }
      for (const counter of takeBack) decrement.run(nameOf(counter), nowMs);
    }
    const readings = [...add, ...takeBack, ...(change.read ?? [])].map((counter): CounterReading => {
      const row = live(nameOf(counter));
      return row ? { count: row.count, msLeft: row.ends_at - nowMs } : { count: 0, msLeft: 0 };
    });
    return { applied, readings };
  });

  return {
    step: async (change) => step.immediate(change, Date.now()),
    close: async () => {
      if (db.open) db.close();
    },
  };
}

/** The embedded default: counters in `<dataDir>/quota.db`; `maxRefunds` per key per window (default unlimited). */
export async function createSqliteQuotaStore(dataDir: string, windowSeconds: number, maxRefunds = Number.POSITIVE_INFINITY): Promise<QuotaStore> {
  return new CountingQuotaStore(openCounters(dataDir, windowSeconds), windowSeconds, maxRefunds);
}
