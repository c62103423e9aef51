/**
 * Sign-in throttling on rate-limiter-flexible: failed attempts are counted per account (the email
 * typed, whether or not it exists, so the throttle says nothing about which accounts exist) and per
 * client address; either budget spent blocks further attempts for a while. A success clears the
 * account's count. The counters live in the account database (SQLite, or PostgreSQL shared by every
 * router), so a restart or a second router does not hand out a fresh budget.
 */
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { AccountStore } from "./account-store.js";

export interface LoginThrottleOptions {
  /** Failed attempts per account per window; default 5. */
  perAccount?: number;
  /** Failed attempts per client address per window; default 20. */
  perAddress?: number;
  /** Window and block length in seconds; default 900 (15 minutes). */
  windowSeconds?: number;
}

export class LoginThrottle {
  private constructor(
    private readonly accounts: RateLimiterAbstract,
    private readonly addresses: RateLimiterAbstract,
  ) {}

  /** Counters in the account database. */
  static async open(store: AccountStore, options: LoginThrottleOptions = {}): Promise<LoginThrottle> {
    const durationSeconds = options.windowSeconds ?? 900;
    return new LoginThrottle(
      await store.rateLimiter({ keyPrefix: "login-account", points: options.perAccount ?? 5, durationSeconds }),
      await store.rateLimiter({ keyPrefix: "login-address", points: options.perAddress ?? 20, durationSeconds }),
    );
  }

  /** Counters in this process's memory (tests, tools). */
  static inMemory(options: LoginThrottleOptions = {}): LoginThrottle {
    const duration = options.windowSeconds ?? 900;
    return new LoginThrottle(
      new RateLimiterMemory({ keyPrefix: "login-account", points: options.perAccount ?? 5, duration, blockDuration: duration }),
      new RateLimiterMemory({ keyPrefix: "login-address", points: options.perAddress ?? 20, duration, blockDuration: duration }),
    );
  }

  /** Seconds until another attempt is allowed for this account or address; 0 when one is allowed now. */
  async retryAfterSeconds(email: string, address: string): Promise<number> {
    const [account, client] = await Promise.all([this.accounts.get(accountKey(email)), this.addresses.get(address)]);
    return Math.max(waitOf(account, this.accounts.points), waitOf(client, this.addresses.points));
  }

  /** Counts a failed attempt against both budgets. */
  async recordFailure(email: string, address: string): Promise<void> {
    await Promise.all([swallowRejection(this.accounts.consume(accountKey(email))), swallowRejection(this.addresses.consume(address))]);
  }

  /** Clears the account's failures after a successful sign-in (the address's stay counted). */
  async recordSuccess(email: string): Promise<void> {
    await this.accounts.delete(accountKey(email));
  }
}

function accountKey(email: string): string {
  return email.trim().toLowerCase();
}

function waitOf(result: RateLimiterRes | null, points: number): number {
  if (result === null || result.consumedPoints < points) return 0;
  return Math.max(1, Math.ceil(result.msBeforeNext / 1000));
}

/** consume() rejects once the budget is spent; that is the expected outcome here, not an error. */
async function swallowRejection(attempt: Promise<RateLimiterRes>): Promise<void> {
  try {
    await attempt;
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
  }
}
