/**
 * Hourly request quotas. A request is charged to its API key's own limit and, for a key a console
 * user owns, to that user's allowance, which all their keys share (quota-charge.ts says which
 * budgets apply). Every budget is a fixed window that starts with its first request.
 *
 * A charge is one atomic step over every budget it names: granted only when each has room, and
 * then counted on each; a refused request is counted on none. So however many requests arrive at
 * once, on however many routers sharing the store, exactly the tighter budget is granted, and a
 * refusal by one budget never uses up the other. A refund gives back to every budget at once.
 *
 * The rules are written once here over {@link QuotaCounters}, a storage of windowed counters with
 * that one atomic step: sqlite-quota-store.ts (the embedded default, which survives a restart) and
 * redis-quota-store.ts (several routers); open-quota-store.ts chooses. rate-limiter-flexible (the
 * sign-in throttle's library) changes one counter per call, so it cannot count two or none.
 */

/** A budget a request is charged to: whose counter it is, and the requests it grants per window. */
export interface QuotaBudget {
  id: string;
  /** Requests granted per window. */
  limit: number;
}

/** The budgets one request is charged to. */
export interface QuotaCharge {
  /** The API key's own limit. */
  key: QuotaBudget;
  /**
   * The allowance of the console user who owns the key, shared by all their keys. Absent where
   * only the key's limit applies: operator keys (the keys CLI), and admins without an allowance.
   */
  user?: QuotaBudget;
}

/** Which budget of a charge. */
export type QuotaBound = keyof QuotaCharge;

/** One budget's state in its current window. */
export interface QuotaUse {
  /** Requests granted per window. */
  limit: number;
  /** Requests counted in the current window. */
  used: number;
  /** Requests left in the current window. */
  remaining: number;
  /** Seconds until the window resets (a whole window when none has started). */
  resetSeconds: number;
}

export interface QuotaDecision {
  allowed: boolean;
  /**
   * The budget that `limit`, `remaining` and `resetSeconds` describe: the tighter one (fewest
   * requests left, then the later reset), which for a refusal is the one that refused.
   */
  bound: QuotaBound;
  /** Requests granted per window by the bound budget. */
  limit: number;
  /** Requests left in the bound budget's window after this one. */
  remaining: number;
  /** Seconds until the bound budget's window resets: on a refusal, when a retry can succeed. */
  resetSeconds: number;
  /** Window length in seconds. */
  windowSeconds: number;
  /** The key's own budget. */
  key: QuotaUse;
  /** The owner's allowance, when the charge names one. */
  user?: QuotaUse;
  /** On a refund: false when the key's refunds for this window were used up, so the request stayed charged. */
  refunded?: boolean;
}

export interface QuotaStore {
  /** Counts one request against every budget of `charge`, or against none when any is spent. */
  consume(charge: QuotaCharge): Promise<QuotaDecision>;
  /**
   * Gives one request back to every budget of `charge` (used when the server, not the client,
   * failed), at most `maxRefunds` times per key per window: a caller who can make the server fail
   * would otherwise get unlimited work for free. Beyond that the request stays charged
   * (`refunded: false`).
   */
  refund(charge: QuotaCharge): Promise<QuotaDecision>;
  /** The current windows of `charge` without counting a request (the early check, the console). */
  peek(charge: QuotaCharge): Promise<QuotaDecision>;
  /** A user's allowance in its current window, without counting a request (the console). */
  peekAllowance(user: QuotaBudget): Promise<QuotaUse>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Storage: what a backend has to do for the rules below

/** The kinds of counter: a key's requests, a user's requests, a key's refunds. */
export type CounterKind = "key" | "user" | "refund";

export interface CounterName {
  kind: CounterKind;
  id: string;
}

/** A counter that may be added to while it is below `limit`. */
export interface BoundedCounter extends CounterName {
  limit: number;
}

/** A counter as it stands after a step. */
export interface CounterReading {
  /** Counted in the current window; 0 when none is open. */
  count: number;
  /** Milliseconds left of the current window; 0 when none is open. */
  msLeft: number;
}

/** One atomic step over several counters; see {@link QuotaCounters.step}. */
export interface CounterStep {
  /** Counters to add one to, each only while below its limit: if any is at it, nothing changes. */
  add?: BoundedCounter[];
  /** Counters to take one from when the step goes through: within an open window, never below zero. */
  takeBack?: CounterName[];
  /** Counters only read. */
  read?: CounterName[];
}

/**
 * Fixed-window counters, each window starting with the counter's first addition and lasting the
 * store's window length. Every step is atomic across all the counters it names, against other
 * steps from this process and from every other process sharing the storage.
 */
export interface QuotaCounters {
  /**
   * Applies `step` and reads every counter it names (`add`, then `takeBack`, then `read`, in order).
   * `applied` is false when an `add` counter was at its limit and nothing changed.
   */
  step(step: CounterStep): Promise<{ applied: boolean; readings: CounterReading[] }>;
  close(): Promise<void>;
}

/** {@link QuotaStore} over any {@link QuotaCounters}: the quota rules, written once. */
export class CountingQuotaStore implements QuotaStore {
  constructor(
    private readonly counters: QuotaCounters,
    private readonly windowSeconds: number,
    /** Refunds granted per key per window (default: unlimited). */
    private readonly maxRefunds = Number.POSITIVE_INFINITY,
  ) {}

  async consume(charge: QuotaCharge): Promise<QuotaDecision> {
    const { applied, readings } = await this.counters.step({ add: budgetsOf(charge).map(({ counter, limit }) => ({ ...counter, limit })) });
    return this.decide(charge, readings, applied);
  }

  async refund(charge: QuotaCharge): Promise<QuotaDecision> {
    const gate: BoundedCounter[] = Number.isFinite(this.maxRefunds) ? [{ kind: "refund", id: charge.key.id, limit: this.maxRefunds }] : [];
    const { applied, readings } = await this.counters.step({ add: gate, takeBack: budgetsOf(charge).map(({ counter }) => counter) });
    const decision = this.decide(charge, readings.slice(gate.length), true);
    return { ...decision, refunded: applied };
  }

  async peek(charge: QuotaCharge): Promise<QuotaDecision> {
    const { readings } = await this.counters.step({ read: budgetsOf(charge).map(({ counter }) => counter) });
    const decision = this.decide(charge, readings, true);
    return { ...decision, allowed: decision.remaining > 0 };
  }

  async peekAllowance(user: QuotaBudget): Promise<QuotaUse> {
    const { readings } = await this.counters.step({ read: [{ kind: "user", id: user.id }] });
    return this.use(user.limit, readings[0]!);
  }

  async close(): Promise<void> {
    await this.counters.close();
  }

  private use(limit: number, reading: CounterReading): QuotaUse {
    const used = Math.max(0, reading.count);
    return {
      limit,
      used,
      remaining: Math.max(0, limit - used),
      resetSeconds: reading.msLeft > 0 ? Math.ceil(reading.msLeft / 1000) : this.windowSeconds,
    };
  }

  /** `readings` in the order of {@link budgetsOf}. */
  private decide(charge: QuotaCharge, readings: CounterReading[], allowed: boolean): QuotaDecision {
    const key = this.use(charge.key.limit, readings[0]!);
    const user = charge.user ? this.use(charge.user.limit, readings[1]!) : undefined;
    // The tighter budget: fewest left, then the later reset (a retry needs room in both), then the key.
    const bound: QuotaBound =
      user && (user.remaining < key.remaining || (user.remaining === key.remaining && user.resetSeconds > key.resetSeconds)) ? "user" : "key";
    const tighter = bound === "user" ? user! : key;
    return {
      allowed,
      bound,
      limit: tighter.limit,
      remaining: tighter.remaining,
      resetSeconds: tighter.resetSeconds,
      windowSeconds: this.windowSeconds,
      key,
      ...(user ? { user } : {}),
    };
  }
}

/** The counters of a charge, the key's first. */
function budgetsOf(charge: QuotaCharge): { counter: CounterName; limit: number }[] {
  const budgets: { counter: CounterName; limit: number }[] = [{ counter: { kind: "key", id: charge.key.id }, limit: charge.key.limit }];
  if (charge.user) budgets.push({ counter: { kind: "user", id: charge.user.id }, limit: charge.user.limit });
  return budgets;
}
