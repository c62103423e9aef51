/**
 * The operations a key can be limited to ("scopes"): the ids of the metered operations of the list
 * (contract/operations.ts), which is also what authentication sees as the operation a request
 * calls. A key without scopes may call every operation.
 */
import { METERED_OPERATIONS, type MeteredOperationId } from "../../contract/operations.js";

export type ApiKeyScope = MeteredOperationId;

export const API_KEY_SCOPES: readonly ApiKeyScope[] = METERED_OPERATIONS.map((operation) => operation.id);

/** What each scope lets a key do, as people read it (console forms, error messages). */
export const API_KEY_SCOPE_LABELS: Readonly<Record<ApiKeyScope, string>> = Object.fromEntries(
  METERED_OPERATIONS.map((operation) => [operation.id, operation.metered.scopeLabel]),
) as Record<ApiKeyScope, string>;

export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === "string" && (API_KEY_SCOPES as readonly string[]).includes(value);
}
