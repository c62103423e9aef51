/**
 * Usage as the console reports it: the recorder that the API path feeds, and the queries over the
 * store (last 24 hours by hour, last 30 days by day, per operation and status, top keys, CSV rows).
 * Queries flush this process's counts first, so a page shows calls made a moment ago; other
 * routers' counts arrive with their next flush.
 */
import type { Logger } from "../../core/logger.js";
import { UsageRecorder, type UsageEvent } from "./usage-recorder.js";
import { DAY_MS, HOUR_MS, hourStart, isErrorStatus, type KeyUsage, type UsageExportRow, type UsageStore } from "./usage-store.js";

/** The report windows the console offers. */
export const USAGE_WINDOWS = {
  "24h": { label: "Last 24 hours", buckets: 24, bucketMs: HOUR_MS },
  "30d": { label: "Last 30 days", buckets: 30, bucketMs: DAY_MS },
} as const;
export type UsageWindow = keyof typeof USAGE_WINDOWS;

/** Rows a CSV export holds at most (hourly buckets: 30 days of 100 key/operation/status triples). */
export const USAGE_EXPORT_MAX_ROWS = 72_000;

/** Whose usage: some keys (a member's own), or undefined for the whole service. */
export type UsageScope = { keyIds: readonly string[] } | undefined;

export interface OperationUsage {
  operation: string;
  requests: number;
  errors: number;
  /** Summed service time of the operation's calls, in seconds. */
  computeSeconds: number;
  /** Requests by HTTP status, e.g. `{ "200": 12, "429": 1 }`. */
  statuses: Record<string, number>;
}

export interface UsageReport {
  window: UsageWindow;
  sinceMs: number;
  untilMs: number;
  bucketMs: number;
  /** Start of every bucket in the window, oldest first, empty ones included. */
  bucketStarts: number[];
  /** Requests per bucket for each operation, aligned with `bucketStarts`. */
  series: { operation: string; requests: number[] }[];
  /** Errors (status 400 and above) per bucket over all operations, aligned with `bucketStarts`. */
  errorSeries: number[];
  byOperation: OperationUsage[];
  /** Requests by HTTP status over all operations, lowest status first. */
  byStatus: { status: number; requests: number }[];
  totals: { requests: number; errors: number; computeSeconds: number };
}

/** The time range a window covers at `nowMs`: whole buckets, the current one included. */
export function windowRange(window: UsageWindow, nowMs: number): { sinceMs: number; untilMs: number; bucketMs: number; bucketStarts: number[] } {
  const { buckets, bucketMs } = USAGE_WINDOWS[window];
  const current = bucketMs === HOUR_MS ? hourStart(nowMs) : Math.floor(nowMs / DAY_MS) * DAY_MS;
  const sinceMs = current - (buckets - 1) * bucketMs;
  const bucketStarts = Array.from({ length: buckets }, (_, index) => sinceMs + index * bucketMs);
  return { sinceMs, untilMs: current + bucketMs, bucketMs, bucketStarts };
}

export interface UsageServiceOptions {
  flushIntervalMs: number;
  /** Buckets older than this many days are deleted (at start, then hourly). */
  retentionDays: number;
  logger?: Logger;
  now?: () => number;
}

export class UsageService {
  private readonly recorder: UsageRecorder;
  private readonly now: () => number;
  private readonly pruneTimer: NodeJS.Timeout;

  constructor(
    private readonly store: UsageStore,
    private readonly options: UsageServiceOptions,
  ) {
    this.recorder = new UsageRecorder(store, { flushIntervalMs: options.flushIntervalMs, logger: options.logger });
    this.now = options.now ?? Date.now;
    this.pruneTimer = setInterval(() => void this.prune(), HOUR_MS);
    this.pruneTimer.unref();
    void this.prune();
  }

  /** Counts one API call (in memory; written with the next batch). */
  record(event: Omit<UsageEvent, "atMs"> & { atMs?: number }): void {
    this.recorder.record({ ...event, atMs: event.atMs ?? this.now() });
  }

  /** Writes the counts gathered so far (the recorder also does every flush interval). */
  async flush(): Promise<void> {
    await this.recorder.flush();
  }

  /** Deletes buckets past the retention period; runs at start and hourly. */
  async prune(): Promise<number> {
    return this.store.prune(this.now() - this.options.retentionDays * DAY_MS).catch((error: unknown) => {
      this.options.logger?.warn({ err: error }, "expired usage buckets could not be deleted");
      return 0;
    });
  }

  /** Requests, errors and compute time of `scope` over `window`, by bucket, operation and status. */
  async report(window: UsageWindow, scope: UsageScope): Promise<UsageReport> {
    await this.recorder.flush();
    const range = windowRange(window, this.now());
    const rows = await this.store.aggregate({ sinceMs: range.sinceMs, untilMs: range.untilMs, keyIds: scope?.keyIds }, range.bucketMs);
    const index = new Map(range.bucketStarts.map((start, position) => [start, position]));
    const series = new Map<string, number[]>();
    const operations = new Map<string, OperationUsage>();
    const statuses = new Map<number, number>();
    const errorSeries = range.bucketStarts.map(() => 0);
    for (const row of rows) {
      const position = index.get(row.bucketStartMs);
      if (position === undefined) continue;
      const perBucket = series.get(row.operation) ?? range.bucketStarts.map(() => 0);
      perBucket[position]! += row.requests;
      series.set(row.operation, perBucket);
      const operation = operations.get(row.operation) ?? { operation: row.operation, requests: 0, errors: 0, computeSeconds: 0, statuses: {} };
      operation.requests += row.requests;
      operation.computeSeconds += row.computeMs / 1000;
      operation.statuses[String(row.status)] = (operation.statuses[String(row.status)] ?? 0) + row.requests;
      if (isErrorStatus(row.status)) {
        operation.errors += row.requests;
        errorSeries[position]! += row.requests;
      }
      operations.set(row.operation, operation);
      statuses.set(row.status, (statuses.get(row.status) ?? 0) + row.requests);
    }
    const byOperation = [...operations.values()].sort((a, b) => b.requests - a.requests || a.operation.localeCompare(b.operation));
    return {
      window,
      ...range,
      series: byOperation.map(({ operation }) => ({ operation, requests: series.get(operation)! })),
      errorSeries,
      byOperation,
      byStatus: [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, requests]) => ({ status, requests })),
      totals: {
        requests: byOperation.reduce((sum, operation) => sum + operation.requests, 0),
        errors: byOperation.reduce((sum, operation) => sum + operation.errors, 0),
        computeSeconds: byOperation.reduce((sum, operation) => sum + operation.computeSeconds, 0),
      },
    };
  }

  /** The most used keys of `scope` over `window`, at most `limit`. */
  async topKeys(window: UsageWindow, scope: UsageScope, limit = 10): Promise<KeyUsage[]> {
    await this.recorder.flush();
    const range = windowRange(window, this.now());
    return this.store.byKey({ sinceMs: range.sinceMs, untilMs: range.untilMs, keyIds: scope?.keyIds }, limit);
  }

  /** Hourly buckets of `scope` over `window`, for CSV export (at most {@link USAGE_EXPORT_MAX_ROWS}). */
  async exportRows(window: UsageWindow, scope: UsageScope): Promise<UsageExportRow[]> {
    await this.recorder.flush();
    const range = windowRange(window, this.now());
    return this.store.exportRows({ sinceMs: range.sinceMs, untilMs: range.untilMs, keyIds: scope?.keyIds }, USAGE_EXPORT_MAX_ROWS);
  }

  /** Writes what is pending and releases the store. */
  async close(): Promise<void> {
    clearInterval(this.pruneTimer);
    await this.recorder.close();
    await this.store.close();
  }
}
