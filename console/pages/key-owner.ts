/**
 * What only a key's owner may do in the console, whatever their role: read the key's jobs (what
 * was submitted and what came back) and see or rotate its webhook signing secret (whoever holds it
 * can sign webhooks the owner's receivers trust, and a rotation breaks their verification).
 * Admins manage every key (rename, revoke) but do neither; keys made with the keys CLI have no
 * owner in the console, and the API gives their secret to the key itself.
 */
import type { User } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";
import type { ApiKeyRecord } from "../../server/keys/api-key-store.js";

/** Key ids are short; anything far longer is not looked up. */
const MAX_KEY_ID_LENGTH = 64;

export function ownsKey(user: User, key: Pick<ApiKeyRecord, "ownerId">): boolean {
  return key.ownerId === user.id;
}

/** The key when `user` owns it; null otherwise, as for an unknown id. */
export async function ownKey(services: AtelierServices, user: User, id: string): Promise<ApiKeyRecord | null> {
  if (typeof id !== "string" || id.length > MAX_KEY_ID_LENGTH) return null;
  const key = await services.keys.get(id);
  return key && ownsKey(user, key) ? key : null;
}
