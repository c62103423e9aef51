/**
 * One behavioural table for both usage stores (embedded SQLite, and PostgreSQL against a real server
 * started for this file), then the recorder's batching and the reports built on a store.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresUsageStore, POSTGRES_USAGE_TABLE } from "../../server/usage/postgres-usage-store.js";
import { SqliteUsageStore } from "../../server/usage/sqlite-usage-store.js";
import { UsageRecorder } from "../../server/usage/usage-recorder.js";
import { UsageService, windowRange } from "../../server/usage/usage-service.js";
import { usageCsv } from "../../server/usage/usage-csv.js";
import { DAY_MS, HOUR_MS, type UsageIncrement, type UsageStore } from "../../server/usage/usage-store.js";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";

/** 2026-11-20T10:00:00Z: a fixed hour so buckets are predictable. */
const T0 = Date.UTC(2026, 10, 20, 10);

function increment(partial: Partial<UsageIncrement>): UsageIncrement {
  return { hourStartMs: T0, keyId: "k1", operation: "tools/upscale", status: 200, requests: 1, computeMs: 100, ...partial };
}

interface Backend {
  name: string;
  skip: boolean;
  open(): Promise<UsageStore>;
}

let postgres: PostgresServer | undefined;
const pgSkipped = skipWithoutPostgres("usage-store");
const opened: UsageStore[] = [];
const dirs: string[] = [];

const backends: Backend[] = [
  {
    name: "sqlite",
    skip: false,
    open: async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-usage-"));
      dirs.push(dir);
      return SqliteUsageStore.open(dir);
    },
  },
  {
    name: "postgres",
    skip: pgSkipped,
    open: async () => PostgresUsageStore.open(await postgres!.createDatabase("usage")),
  },
];

beforeAll(async () => {
  if (!pgSkipped) postgres = await startPostgresServer();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});
afterAll(async () => {
  await postgres?.dispose();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function open(backend: Backend): Promise<UsageStore> {
  const store = await backend.open();
  opened.push(store);
  return store;
}

describe.each(backends)("usage store on $name", (backend) => {
  it.skipIf(backend.skip)("adds increments into the same bucket across batches", async () => {
    const store = await open(backend);
    await store.add([increment({ requests: 2, computeMs: 250 }), increment({ status: 400, computeMs: 3 })]);
    await store.add([increment({ requests: 3, computeMs: 750 })]);
    const rows = await store.aggregate({ sinceMs: T0, untilMs: T0 + HOUR_MS }, HOUR_MS);
    expect(rows).toEqual([
      { bucketStartMs: T0, operation: "tools/upscale", status: 200, requests: 5, computeMs: 1000 },
      { bucketStartMs: T0, operation: "tools/upscale", status: 400, requests: 1, computeMs: 3 },
    ]);
  });

  it.skipIf(backend.skip)("sums duplicate buckets within one batch", async () => {
    const store = await open(backend);
    await store.add([increment({}), increment({}), increment({ keyId: "k2" })]);
    expect(await store.byKey({ sinceMs: T0, untilMs: T0 + HOUR_MS }, 10)).toEqual([
      { keyId: "k1", requests: 2, errors: 0, computeMs: 200 },
      { keyId: "k2", requests: 1, errors: 0, computeMs: 100 },
    ]);
  });

  it.skipIf(backend.skip)("groups hours into UTC days and filters by time and key", async () => {
    const store = await open(backend);
    const day = Math.floor(T0 / DAY_MS) * DAY_MS;
    await store.add([
      increment({ hourStartMs: day, requests: 1 }),
      increment({ hourStartMs: day + 23 * HOUR_MS, requests: 2 }),
      increment({ hourStartMs: day + DAY_MS, requests: 4 }),
      increment({ hourStartMs: day + DAY_MS, keyId: "other", requests: 8 }),
      increment({ hourStartMs: day + 2 * DAY_MS, requests: 16 }),
    ]);
    const rows = await store.aggregate({ sinceMs: day, untilMs: day + 2 * DAY_MS, keyIds: ["k1"] }, DAY_MS);
    expect(rows.map((row) => [row.bucketStartMs - day, row.requests])).toEqual([
      [0, 3],
      [DAY_MS, 4],
    ]);
    const all = await store.aggregate({ sinceMs: day, untilMs: day + 3 * DAY_MS }, DAY_MS);
    expect(all.map((row) => row.requests)).toEqual([3, 12, 16]);
    expect(await store.aggregate({ sinceMs: day, untilMs: day + 3 * DAY_MS, keyIds: [] }, DAY_MS)).toEqual([]);
  });

  it.skipIf(backend.skip)("ranks keys by requests and counts statuses of 400 and above as errors", async () => {
    const store = await open(backend);
    await store.add([
      increment({ keyId: "quiet", requests: 1 }),
      increment({ keyId: "busy", requests: 10 }),
      increment({ keyId: "busy", status: 429, requests: 3 }),
      increment({ keyId: "busy", status: 503, operation: "generate", requests: 2 }),
      increment({ keyId: "middle", status: 401, requests: 5 }),
    ]);
    const ranked = await store.byKey({ sinceMs: T0, untilMs: T0 + HOUR_MS }, 2);
    expect(ranked.map(({ keyId, requests, errors }) => ({ keyId, requests, errors }))).toEqual([
      { keyId: "busy", requests: 15, errors: 5 },
      { keyId: "middle", requests: 5, errors: 5 },
    ]);
  });

  it.skipIf(backend.skip)("exports hourly rows in order and prunes old hours", async () => {
    const store = await open(backend);
    await store.add([increment({ hourStartMs: T0 + HOUR_MS, keyId: "b" }), increment({ hourStartMs: T0, keyId: "a" }), increment({ hourStartMs: T0 - 40 * DAY_MS })]);
    const exported = await store.exportRows({ sinceMs: T0, untilMs: T0 + 2 * HOUR_MS }, 100);
    expect(exported.map((row) => [row.hourStartMs, row.keyId])).toEqual([
      [T0, "a"],
      [T0 + HOUR_MS, "b"],
    ]);
    expect(await store.prune(T0 - DAY_MS)).toBe(1);
    expect(await store.exportRows({ sinceMs: 0, untilMs: T0 + DAY_MS }, 100)).toHaveLength(2);
  });

  it.skipIf(backend.skip)("keeps its counts when reopened", async () => {
    if (backend.name === "sqlite") {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-usage-"));
      dirs.push(dir);
      const first = SqliteUsageStore.open(dir);
      await first.add([increment({ requests: 7 })]);
      await first.close();
      const second = SqliteUsageStore.open(dir);
      opened.push(second);
      expect((await second.byKey({ sinceMs: T0, untilMs: T0 + HOUR_MS }, 5))[0]?.requests).toBe(7);
    } else {
      const url = await postgres!.createDatabase("usage_reopen");
      // Two routers opening a fresh database at once migrate it once and add to the same buckets.
      const [one, two] = await Promise.all([PostgresUsageStore.open(url), PostgresUsageStore.open(url)]);
      opened.push(one, two);
      await Promise.all([one.add([increment({ requests: 3 })]), two.add([increment({ requests: 4 })])]);
      expect((await one.byKey({ sinceMs: T0, untilMs: T0 + HOUR_MS }, 5))[0]?.requests).toBe(7);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query(`SELECT requests FROM ${POSTGRES_USAGE_TABLE}`);
      await client.end();
      expect(rows).toEqual([{ requests: "7" }]);
    }
  });
});

/** A store that counts calls to add and can be made to fail. */
class CountingStore extends Object {
  batches: UsageIncrement[][] = [];
  failing = false;
  constructor(private readonly inner: UsageStore) {
    super();
  }
  wrap(): UsageStore {
    return {
      add: async (increments) => {
        if (this.failing) throw new Error("database down");
        this.batches.push(increments.map((row) => ({ ...row })));
        await this.inner.add(increments);
      },
      aggregate: (filter, bucketMs) => this.inner.aggregate(filter, bucketMs),
      byKey: (filter, limit) => this.inner.byKey(filter, limit),
      exportRows: (filter, limit) => this.inner.exportRows(filter, limit),
      prune: (beforeMs) => this.inner.prune(beforeMs),
      close: () => this.inner.close(),
    };
  }
}

describe("usage recorder", () => {
  it("writes nothing per call, then one batch of summed buckets per flush", async () => {
    const counting = new CountingStore(await open(backends[0]!));
    const recorder = new UsageRecorder(counting.wrap(), { flushIntervalMs: 60_000 });
    for (let index = 0; index < 1000; index++) {
      recorder.record({ keyId: index % 2 ? "odd" : "even", operation: "generate", status: 200, durationMs: 2, atMs: T0 + index });
    }
    expect(counting.batches).toHaveLength(0);
    expect(recorder.pendingBuckets).toBe(2);
    await recorder.flush();
    expect(counting.batches).toHaveLength(1);
    expect(counting.batches[0]!.map((row) => [row.keyId, row.requests, row.computeMs]).sort()).toEqual([
      ["even", 500, 1000],
      ["odd", 500, 1000],
    ]);
    await recorder.flush();
    expect(counting.batches).toHaveLength(1);
    await recorder.close();
  });

  it("keeps the counts of a failed write for the next flush", async () => {
    const counting = new CountingStore(await open(backends[0]!));
    const recorder = new UsageRecorder(counting.wrap(), { flushIntervalMs: 60_000 });
    recorder.record({ keyId: "k1", operation: "generate", status: 200, durationMs: 5, atMs: T0 });
    counting.failing = true;
    await recorder.flush();
    recorder.record({ keyId: "k1", operation: "generate", status: 200, durationMs: 5, atMs: T0 + 1 });
    counting.failing = false;
    await recorder.flush();
    expect(counting.batches).toEqual([[expect.objectContaining({ keyId: "k1", requests: 2, computeMs: 10 })]]);
    await recorder.close();
  });

  it("flushes on its timer", async () => {
    const counting = new CountingStore(await open(backends[0]!));
    const recorder = new UsageRecorder(counting.wrap(), { flushIntervalMs: 50 });
    recorder.record({ keyId: "k1", operation: "generate", status: 200, durationMs: 5, atMs: T0 });
    await expect.poll(() => counting.batches.length, { timeout: 2_000 }).toBe(1);
    await recorder.close();
  });

  it("drops the oldest hours past its memory bound", async () => {
    const counting = new CountingStore(await open(backends[0]!));
    const recorder = new UsageRecorder(counting.wrap(), { flushIntervalMs: 60_000, maxPendingBuckets: 3 });
    for (let hour = 0; hour < 5; hour++) recorder.record({ keyId: "k1", operation: "generate", status: 200, durationMs: 1, atMs: T0 + hour * HOUR_MS });
    expect(recorder.pendingBuckets).toBe(3);
    await recorder.flush();
    expect(counting.batches[0]!.map((row) => (row.hourStartMs - T0) / HOUR_MS).sort()).toEqual([2, 3, 4]);
    await recorder.close();
  });
});

describe("usage reports", () => {
  it("fills every hour of the last 24 with per-operation series, statuses, errors and compute seconds", async () => {
    const now = T0 + 30 * 60_000;
    const service = new UsageService(await backends[0]!.open(), { flushIntervalMs: 60_000, retentionDays: 400, now: () => now });
    service.record({ keyId: "mine", operation: "tools/upscale", status: 200, durationMs: 1500, atMs: now });
    service.record({ keyId: "mine", operation: "tools/upscale", status: 200, durationMs: 500, atMs: now - 2 * HOUR_MS });
    service.record({ keyId: "mine", operation: "prompt/improve", status: 429, durationMs: 1, atMs: now });
    service.record({ keyId: "mine", operation: "prompt/improve", status: 200, durationMs: 1, atMs: now - 25 * HOUR_MS });
    service.record({ keyId: "theirs", operation: "generate", status: 200, durationMs: 9000, atMs: now });
    const mine = await service.report("24h", { keyIds: ["mine"] });
    expect(mine.bucketStarts).toHaveLength(24);
    expect(mine.bucketStarts.at(-1)).toBe(T0);
    expect(mine.series).toEqual([
      { operation: "tools/upscale", requests: [...Array(21).fill(0), 1, 0, 1] },
      { operation: "prompt/improve", requests: [...Array(23).fill(0), 1] },
    ]);
    expect(mine.errorSeries.at(-1)).toBe(1);
    expect(mine.byOperation[0]).toEqual({ operation: "tools/upscale", requests: 2, errors: 0, computeSeconds: 2, statuses: { "200": 2 } });
    expect(mine.byStatus).toEqual([
      { status: 200, requests: 2 },
      { status: 429, requests: 1 },
    ]);
    expect(mine.totals).toEqual({ requests: 3, errors: 1, computeSeconds: 2.001 });

    const month = await service.report("30d", undefined);
    expect(month.bucketStarts).toHaveLength(30);
    expect(month.totals.requests).toBe(5);
    expect(month.byOperation.map((row) => row.operation)).toEqual(["prompt/improve", "tools/upscale", "generate"]);
    expect((await service.topKeys("24h", undefined)).map((row) => row.keyId)).toEqual(["mine", "theirs"]);
    await service.close();
  });

  it("windows end with the current bucket", () => {
    const range = windowRange("30d", T0 + 5);
    expect(range.untilMs - range.sinceMs).toBe(30 * DAY_MS);
    expect(range.untilMs).toBeGreaterThan(T0);
  });

  it("exports CSV with names quoted and formulas defused", () => {
    const csv = usageCsv(
      [increment({ keyId: "k1", computeMs: 1234 }), increment({ keyId: "k2", operation: "generate", status: 503 })],
      (id) => (id === "k1" ? 'CI, "nightly"' : "=HYPERLINK(1)"),
    );
    expect(csv.split("\r\n")).toEqual([
      "hour_start_utc,key_id,key_name,operation,status,requests,compute_seconds",
      '2026-11-20T10:00:00.000Z,k1,"CI, ""nightly""",tools/upscale,200,1,1.234',
      "2026-11-20T10:00:00.000Z,k2,'=HYPERLINK(1),generate,503,1,0.100",
      "",
    ]);
  });
});
