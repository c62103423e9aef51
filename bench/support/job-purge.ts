/**
 * Child of bench/router-event-loop.ts, preloaded with bench/support/event-loop-probe.ts: opens the
 * router's job store (SQLite in ATELIER_DATA_DIR, or Redis at ATELIER_REDIS_URL) and, when asked,
 * purges every result and record as if their retention had passed, so the probe measures what the
 * purge that runs every minute holds the event loop for. Messages (IPC): `opened` once the store is
 * open and messages are heard, then `purge` -> what was purged.
 */
import { Redis } from "ioredis";
import { loadConfig } from "../../core/config.js";
import type { JobStore } from "../../jobs/job-store.js";
import { RedisJobStore } from "../../jobs/redis-job-store.js";
import { SqliteJobStore } from "../../jobs/sqlite-job-store.js";

const config = loadConfig(process.env);
const store: JobStore =
  config.jobs.redisUrl !== undefined ? new RedisJobStore(new Redis(config.jobs.redisUrl), { deliveryLeaseMs: 1_000 }) : new SqliteJobStore(config.dataDir);
/** Far enough ahead that every result and record has expired. */
const LATER_MS = 10 * 365 * 24 * 3_600_000;

process.on("message", (message: unknown) => {
  if (message !== "purge") return;
  const later = Date.now() + LATER_MS;
  void store.purge(later, later, later).then((purged) => process.send?.(purged));
});
process.on("SIGTERM", () => void store.close().then(() => process.exit(0)));
// The probe lets go of the channel (a router must not be kept alive by it); this process lives to hear it.
process.channel?.ref();
// Messages sent before this module's listener existed would have been lost.
process.send?.("opened");
