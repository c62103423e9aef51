/**
 * Per-key API usage as hourly counters: one row per (hour, key, operation, HTTP status) holding how
 * many requests there were and how long they took. The API path never writes here directly: a
 * {@link UsageRecorder} adds up requests in memory and hands this store one batch at a time.
 *
 * Keys, not users, are recorded: a user's usage is the usage of the keys they own, so ownership
 * stays a fact of the key store alone (see usage-service.ts).
 */

/** Length of one stored bucket: usage is kept per UTC hour. */
export const HOUR_MS = 3_600_000;
/** One UTC day, the bucket of 30-day reports. */
export const DAY_MS = 24 * HOUR_MS;

/** Counts added to one hourly bucket. */
export interface UsageIncrement {
  /** Start of the UTC hour, in milliseconds since the epoch (a multiple of {@link HOUR_MS}). */
  hourStartMs: number;
  keyId: string;
  /** The operation called, e.g. `tools/upscale` (the REST path without `/v1`). */
  operation: string;
  /** The HTTP status the call answered with. */
  status: number;
  requests: number;
  /** Summed wall time of those requests in the service, in milliseconds. */
  computeMs: number;
}

/** Which usage a query looks at: a time range and, optionally, only some keys. */
export interface UsageFilter {
  /** Inclusive start, milliseconds since the epoch (rounded down to its hour). */
  sinceMs: number;
  /** Exclusive end, milliseconds since the epoch. */
  untilMs: number;
  /** Only these keys; undefined: every key (the whole service). An empty list matches nothing. */
  keyIds?: readonly string[];
}

/** Requests grouped by time bucket, operation and status. */
export interface UsageRow {
  /** Start of the bucket (hour or UTC day), milliseconds since the epoch. */
  bucketStartMs: number;
  operation: string;
  status: number;
  requests: number;
  computeMs: number;
}

/** Requests of one key over a filter's range. */
export interface KeyUsage {
  keyId: string;
  requests: number;
  /** Requests that answered with a status of 400 or more. */
  errors: number;
  computeMs: number;
}

/** One hourly bucket of one key, as exported to CSV. */
export type UsageExportRow = UsageIncrement;

export interface UsageStore {
  /** Adds the counts of every increment to its bucket, all in one transaction. */
  add(increments: readonly UsageIncrement[]): Promise<void>;
  /** Requests grouped into buckets of `bucketMs` (an hour or a day) by operation and status. */
  aggregate(filter: UsageFilter, bucketMs: number): Promise<UsageRow[]>;
  /** Requests per key, most used first, at most `limit` keys. */
  byKey(filter: UsageFilter, limit: number): Promise<KeyUsage[]>;
  /** Every hourly bucket in the range, oldest first, at most `limit` rows. */
  exportRows(filter: UsageFilter, limit: number): Promise<UsageExportRow[]>;
  /** Deletes buckets older than `beforeMs`; returns how many went. */
  prune(beforeMs: number): Promise<number>;
  close(): Promise<void>;
}

/** The hour `ms` falls in. */
export function hourStart(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/** Requests with this status count as errors in reports. */
export function isErrorStatus(status: number): boolean {
  return status >= 400;
}
