/**
 * Which budgets a request is charged to: the one rule behind the authentication middleware, the
 * facade's early check, the job runner's refunds and the console's figures. Every key has its own
 * hourly limit; a key a console user owns is also charged to that user's hourly allowance, which
 * all their keys share, so making more keys never buys more requests.
 */
import type { User } from "../accounts/account-store.js";
import type { AtelierServices } from "../context.js";
import { effectiveHourlyLimit, type ApiKeyRecord } from "../keys/api-key-store.js";
import type { QuotaCharge } from "./quota-store.js";

/**
 * The requests per window all of `user`'s keys may make together: the allowance an admin set,
 * else `defaultLimit` (`ATELIER_RATE_LIMIT_PER_HOUR`). Null for an admin without an allowance of
 * their own: only each key's limit applies, so the people running the service are not held to a
 * member's default.
 */
export function hourlyAllowanceOf(user: Pick<User, "role" | "keyAllowance">, defaultLimit: number): number | null {
  if (user.keyAllowance !== null) return user.keyAllowance;
  return user.role === "admin" ? null : defaultLimit;
}

/** What one request with `apiKey` is charged to; reads the owner's allowance from the account store. */
export async function quotaChargeOf(apiKey: ApiKeyRecord, services: Pick<AtelierServices, "accounts" | "config">): Promise<QuotaCharge> {
  const { defaultLimit } = services.config.quota;
  const key = { id: apiKey.id, limit: effectiveHourlyLimit(apiKey, defaultLimit) };
  if (apiKey.ownerId === null) return { key };
  const owner = await services.accounts.getUser(apiKey.ownerId);
  // A key whose owner is no longer on record keeps the default allowance rather than none.
  const allowance = owner ? hourlyAllowanceOf(owner, defaultLimit) : defaultLimit;
  return allowance === null ? { key } : { key, user: { id: apiKey.ownerId, limit: allowance } };
}
