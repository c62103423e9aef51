/**
 * Password-check throttling on rate-limiter-flexible: checks are counted per account (the email
 * typed, whether or not it exists, so the throttle says nothing about which accounts exist) and per
 * client address; either budget spent blocks further checks for a while. The counters live in the
 * account database (SQLite, or PostgreSQL shared by every router), so a restart or a second router
 * does not hand out a fresh budget.
 *
 * An attempt is taken from the budgets before the password is checked, each by one atomic
 * upsert in the database, and given back when the password was right. Counting only after the
 * slow hash would let every guess sent at once read the same untouched count and all be checked.
 */
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { normaliseEmail, type AccountStore } from "./account-store.js";

export interface LoginThrottleOptions {
  /** Failed checks per account per window; default 5. */
  perAccount?: number;
  /** Failed checks per client address per window; default 20. */
  perAddress?: number;
  /** Window and block length in seconds; default 900 (15 minutes). */
  windowSeconds?: number;
}

/** The answer of a throttled check, or how long to wait when a budget was spent and nothing was checked. */
export type ThrottledCheck<T> = { throttled: false; result: T } | { throttled: true; retryAfterSeconds: number };

interface Limiters {
  accounts: RateLimiterAbstract;
  addresses: RateLimiterAbstract;
}

export class LoginThrottle {
  private constructor(private readonly limiters: Promise<Limiters>) {
    // A failure to open is reported by the first check, not as an unhandled rejection now.
    limiters.catch(() => {});
  }

  /** Counters in the account database; their table is made in the background. */
  static open(store: AccountStore, options: LoginThrottleOptions = {}): LoginThrottle {
    const durationSeconds = options.windowSeconds ?? 900;
    const opening = Promise.all([
      store.rateLimiter({ keyPrefix: "login-account", points: options.perAccount ?? 5, durationSeconds }),
      store.rateLimiter({ keyPrefix: "login-address", points: options.perAddress ?? 20, durationSeconds }),
    ]);
    return new LoginThrottle(opening.then(([accounts, addresses]) => ({ accounts, addresses })));
  }

  /** Counters in this process's memory (tests, tools). */
  static inMemory(options: LoginThrottleOptions = {}): LoginThrottle {
    const duration = options.windowSeconds ?? 900;
    return new LoginThrottle(
      Promise.resolve({
        accounts: new RateLimiterMemory({ keyPrefix: "login-account", points: options.perAccount ?? 5, duration, blockDuration: duration }),
        addresses: new RateLimiterMemory({ keyPrefix: "login-address", points: options.perAddress ?? 20, duration, blockDuration: duration }),
      }),
    );
  }

  /**
   * Runs `check` (a password check for `email` from `address`) when both budgets allow one more;
   * a truthy answer is a success. A success clears the account's count and gives the address its
   * attempt back, so only failures stay counted. A check that throws keeps its attempt counted.
   */
  async check<T>(email: string, address: string, check: () => Promise<T>): Promise<ThrottledCheck<T>> {
    const { accounts, addresses } = await this.limiters;
    const account = normaliseEmail(email);
    // The address first: a spent address then cannot use up accounts' budgets on its way out.
    const addressWait = await refusal(addresses.consume(address));
    if (addressWait > 0) return { throttled: true, retryAfterSeconds: addressWait };
    const accountWait = await refusal(accounts.consume(account));
    if (accountWait > 0) {
      // Nothing was checked, so the address has not failed.
      await addresses.reward(address);
      return { throttled: true, retryAfterSeconds: accountWait };
    }
    const result = await check();
    if (result) await Promise.all([accounts.delete(account), addresses.reward(address)]);
    return { throttled: false, result };
  }
}

/**
 * Seconds to wait when the attempt was refused, else 0. consume() rejects with a RateLimiterRes
 * once the budget is spent; that is an expected answer here, anything else is an error.
 */
async function refusal(attempt: Promise<RateLimiterRes>): Promise<number> {
  try {
    await attempt;
    return 0;
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    return Math.max(1, Math.ceil(error.msBeforeNext / 1000));
  }
}
