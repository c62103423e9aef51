/**
 * Per-key request quotas on rate-limiter-flexible: a fixed window per key that starts with the
 * key's first request. The counter is one atomic upsert in the store, so exactly `limit` requests
 * are granted however many arrive at once, and the SQLite store survives a restart (Redis serves
 * several router processes; see redis-quota-store.ts, and open-quota-store.ts for the choice).
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { RateLimiterRes, RateLimiterSQLite, type RateLimiterAbstract } from "rate-limiter-flexible";

export interface QuotaDecision {
  allowed: boolean;
  /** Requests granted per window to this key. */
  limit: number;
  /** Requests left in the current window after this one. */
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  /** Window length in seconds. */
  windowSeconds: number;
  /** On a refund: false when the key's refunds for this window were used up, so the request stayed charged. */
  refunded?: boolean;
}

export interface QuotaStore {
  /** Counts one request against `keyId`, whose limit is `limit` per window. */
  consume(keyId: string, limit: number): Promise<QuotaDecision>;

  /**
   * Gives back one request (used when the server, not the client, failed), at most `maxRefunds`
   * times per key per window: a caller who can make the server fail would otherwise get unlimited
   * work for free. Beyond that the request stays charged (`refunded: false`).
   */
  refund(keyId: string, limit: number): Promise<QuotaDecision>;
  /** The current window's use of `keyId` without counting a request (the console's key list). */
  peek(keyId: string, limit: number): Promise<QuotaDecision>;
  close(): Promise<void>;
}

/**
 * The library compares against one fixed `points`; per-key limits are compared here instead, so a
 * key's counter is kept when its limit changes.
 */
export const UNBOUNDED_POINTS = Number.MAX_SAFE_INTEGER;

export interface RateLimiterQuotaStoreOptions {
  /** Releases the limiter's connection. */
  onClose?: () => Promise<void>;
  /**
   * What a failing store call becomes (with unbounded points the limiter never refuses, so every
   * rejection is the store's). Default: rethrown as is, which clients see as a 500.
   */
  onStoreError?: (error: unknown) => Error;
  /** Counts refunds per key per window, in the same store; with it, `maxRefunds` applies. */
  refundLimiter?: RateLimiterAbstract;
  /** Refunds granted per key per window (default: unlimited). */
  maxRefunds?: number;
}

export class RateLimiterQuotaStore implements QuotaStore {
  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly windowSeconds: number,
    private readonly options: RateLimiterQuotaStoreOptions = {},
  ) {}

  async consume(keyId: string, limit: number): Promise<QuotaDecision> {
    return this.decide(await this.call(() => this.limiter.consume(keyId, 1)), limit);
  }

  async refund(keyId: string, limit: number): Promise<QuotaDecision> {
    const { refundLimiter, maxRefunds = Number.POSITIVE_INFINITY } = this.options;
    if (refundLimiter && Number.isFinite(maxRefunds)) {
      const refunds = await this.call(() => refundLimiter.consume(keyId, 1));
      if (refunds.consumedPoints > maxRefunds) {
        // Points 0: reads the counter without changing it, in the same atomic call as any other.
        return { ...this.decide(await this.call(() => this.limiter.penalty(keyId, 0)), limit), refunded: false };
      }
    }
    return { ...this.decide(await this.call(() => this.limiter.reward(keyId, 1)), limit), refunded: true };
  }

  async peek(keyId: string, limit: number): Promise<QuotaDecision> {
    const result = await this.call(async () => (await this.limiter.get(keyId)) ?? new RateLimiterRes(UNBOUNDED_POINTS, 0, 0, false));
    return this.decide(result, limit);
  }

  async close(): Promise<void> {
    await this.options.onClose?.();
  }

  private async call(operation: () => Promise<RateLimiterRes>): Promise<RateLimiterRes> {
    try {
      return await operation();
    } catch (error) {
      throw this.options.onStoreError ? this.options.onStoreError(error) : error;
    }
  }

  private decide(result: RateLimiterRes, limit: number): QuotaDecision {
    const used = Math.max(0, result.consumedPoints);
    const resetMs = result.msBeforeNext > 0 ? result.msBeforeNext : this.windowSeconds * 1000;
    return {
      allowed: used <= limit,
      limit,
      remaining: Math.max(0, limit - used),
      resetSeconds: Math.ceil(resetMs / 1000),
      windowSeconds: this.windowSeconds,
    };
  }
}

export const QUOTA_DATABASE_FILE = "quota.db";

/** The embedded default: counters in `<dataDir>/quota.db`; `maxRefunds` per key per window (default unlimited). */
export async function createSqliteQuotaStore(dataDir: string, windowSeconds: number, maxRefunds = Number.POSITIVE_INFINITY): Promise<QuotaStore> {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, QUOTA_DATABASE_FILE));
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  // Each table is created asynchronously and reported through the constructor's callback.
  const counter = async (keyPrefix: string) => {
    let settle: (error?: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      settle = (error) => (error ? reject(error) : resolve());
    });
    const limiter = new RateLimiterSQLite(
      { storeClient: db, storeType: "better-sqlite3", tableName: "quota_counters", keyPrefix, points: UNBOUNDED_POINTS, duration: windowSeconds },
      (error?: Error) => settle(error),
    );
    await ready;
    return limiter;
  };
  const limiter = await counter("key");
  const refundLimiter = await counter("refund");
  return new RateLimiterQuotaStore(limiter, windowSeconds, {
    refundLimiter,
    maxRefunds,
    onClose: async () => {
      db.close();
    },
  });
}
