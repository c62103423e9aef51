/**
 * Bearer-key authentication: the only accepted scheme, checked against the key store together
 * with the operation called (the procedure's tRPC path, e.g. `prompt.improve`): the store refuses
 * revoked and unknown keys (null), expired keys (`KEY_EXPIRED`) and keys whose scopes do not
 * include the operation (`KEY_SCOPE_DENIED`).
 */
import { AtelierError } from "../../core/errors.js";
import type { ApiKeyRecord, ApiKeyStore } from "../keys/api-key-store.js";
import { middleware } from "../trpc.js";

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i;

/** The key an `Authorization` header presents, for `operation`; throws UNAUTHORIZED (or the store's refusal). Also used by the facade before it reads a body. */
export async function apiKeyFromAuthorization(header: string | undefined, keys: ApiKeyStore, operation: string): Promise<ApiKeyRecord> {
  if (header === undefined || header.trim() === "") {
    throw new AtelierError(
      "UNAUTHORIZED",
      "Missing API key. Send it as `Authorization: Bearer <key>`; create a key in the console's API keys area (or with `npm run keys -- create --name NAME`).",
    );
  }
  const match = BEARER.exec(header);
  if (!match) {
    throw new AtelierError("UNAUTHORIZED", "Malformed Authorization header. Use the Bearer scheme: `Authorization: Bearer <key>`.");
  }
  const apiKey = await keys.authenticate(match[1]!, operation);
  if (!apiKey) {
    throw new AtelierError("UNAUTHORIZED", "The API key is not valid: it is unknown or has been revoked.");
  }
  return apiKey;
}

export const authenticate = middleware(async ({ ctx, path, next }) => {
  const apiKey = ctx.authenticated?.get(path) ?? (await apiKeyFromAuthorization(ctx.authorization, ctx.services.keys, path));
  ctx.note?.({ keyId: apiKey.id });
  return next({ ctx: { apiKey } });
});
