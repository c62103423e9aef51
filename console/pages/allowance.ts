/**
 * A user's hourly allowance (what all their keys may make together) and their active keys against
 * the cap: the API keys area shows a user their own, the Users page shows admins everyone's.
 */
import type { User } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";
import { isActiveKey, type ApiKeyRecord } from "../../server/keys/api-key-store.js";
import { hourlyAllowanceOf } from "../../server/quota/quota-charge.js";
import type { QuotaUse } from "../../server/quota/quota-store.js";
import { html, type Html } from "../server/html.js";
import { count } from "./format.js";

export interface UserAllowance {
  /** The allowance in its current window; null when the user has none (only each key's own limit applies). */
  use: QuotaUse | null;
  /** True when no admin set an allowance for the user, so the service default (or none, for an admin) applies. */
  isDefault: boolean;
  /** The user's keys neither revoked nor expired. */
  activeKeys: number;
  /** The most active keys a user may have (`ATELIER_MAX_KEYS_PER_USER`). */
  maxKeys: number;
}

/** `keys`: any list holding the user's keys (others' are ignored). */
export async function userAllowance(services: AtelierServices, user: User, keys: readonly ApiKeyRecord[], nowMs = Date.now()): Promise<UserAllowance> {
  const limit = hourlyAllowanceOf(user, services.config.quota.defaultLimit);
  return {
    use: limit === null ? null : await services.quota.peekAllowance({ id: user.id, limit }),
    isDefault: user.keyAllowance === null,
    activeKeys: keys.filter((key) => key.ownerId === user.id && isActiveKey(key, nowMs)).length,
    maxKeys: services.config.console.maxKeysPerUser,
  };
}

/** "37 of 100 requests" this window, or that there is no shared allowance. */
export function allowanceUse(allowance: UserAllowance): Html {
  if (allowance.use === null) return html`no shared allowance`;
  return html`${count(allowance.use.used)} of ${count(allowance.use.limit)} requests`;
}

/** "3 of 20" */
export function activeKeysOfCap(allowance: UserAllowance): string {
  return `${count(allowance.activeKeys)} of ${count(allowance.maxKeys)}`;
}

/** Minutes until the allowance's window resets, once it has started. */
function resetNote(use: QuotaUse): string {
  if (use.used === 0) return "";
  return `; starts afresh in ${Math.max(1, Math.ceil(use.resetSeconds / 60))} min`;
}

/** The signed-in user's own allowance and keys, at the top of the API keys area. */
export function allowancePanel(allowance: UserAllowance): Html {
  return html`<section class="panel" aria-labelledby="allowance-heading">
    <h2 id="allowance-heading">Your allowance</h2>
    <dl class="details">
      <dt>Requests this hour</dt>
      <dd>${
        allowance.use === null
          ? "No shared allowance: each key’s own hourly limit applies."
          : html`${allowanceUse(allowance)}, shared by all your keys${resetNote(allowance.use)}`
      }</dd>
      <dt>Active keys</dt>
      <dd>${activeKeysOfCap(allowance)}${allowance.activeKeys >= allowance.maxKeys ? " (revoke one to create another)" : ""}</dd>
    </dl>
  </section>`;
}
