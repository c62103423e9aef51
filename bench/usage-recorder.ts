/**
 * What usage counting costs: the time one `record` adds to an API call (an in-memory increment), and
 * how long a flush of a realistic batch takes in the embedded SQLite store (off the request path).
 *
 *   npx tsx bench/usage-recorder.ts [calls] [keys]
 *
 * Defaults: 1,000,000 calls spread over 200 keys, 5 operations and 4 statuses (up to 4,000 buckets
 * per hour, far more than a real batch of a few seconds holds).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SqliteUsageStore } from "../server/usage/sqlite-usage-store.js";
import { UsageRecorder } from "../server/usage/usage-recorder.js";

const calls = Number(process.argv[2] ?? 1_000_000);
const keyCount = Number(process.argv[3] ?? 200);
const operations = ["generate", "tools/upscale", "tools/style-transfer", "tools/background-remove", "prompt/improve"];
const statuses = [200, 400, 429, 503];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-usage-bench-"));
const store = SqliteUsageStore.open(dir);
const recorder = new UsageRecorder(store, { flushIntervalMs: 3_600_000 });
const keys = Array.from({ length: keyCount }, (_, index) => `key${index.toString().padStart(8, "0")}`);
const now = Date.now();

// Warm up the code paths, then measure.
for (let index = 0; index < 10_000; index++) recorder.record({ keyId: keys[index % keyCount]!, operation: operations[index % 5]!, status: 200, durationMs: 12.5, atMs: now });
await recorder.flush();

const started = process.hrtime.bigint();
for (let index = 0; index < calls; index++) {
  recorder.record({ keyId: keys[index % keyCount]!, operation: operations[index % 5]!, status: statuses[index % 7 === 0 ? 1 + (index % 3) : 0]!, durationMs: 12.5, atMs: now });
}
const recordNs = Number(process.hrtime.bigint() - started) / calls;
const buckets = recorder.pendingBuckets;

const flushStarted = process.hrtime.bigint();
await recorder.flush();
const flushMs = Number(process.hrtime.bigint() - flushStarted) / 1e6;

console.log(`record: ${recordNs.toFixed(0)} ns per call over ${calls.toLocaleString("en-US")} calls (${keyCount} keys)`);
console.log(`flush:  ${flushMs.toFixed(1)} ms for ${buckets} buckets in one SQLite transaction (${((flushMs * 1000) / Math.max(1, buckets)).toFixed(1)} µs per bucket)`);

await recorder.close();
await store.close();
fs.rmSync(dir, { recursive: true, force: true });
