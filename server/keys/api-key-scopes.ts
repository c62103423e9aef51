/**
 * The operations a key can be limited to ("scopes"): the tRPC paths of the metered procedures,
 * which is also what the API's authentication sees as the operation a request calls. A key
 * without scopes may call every operation. test/keys/api-key-scopes.test.ts keeps this list equal
 * to the router's metered procedures.
 */
export const API_KEY_SCOPES = ["generate", "tools.upscale", "tools.styleTransfer", "tools.backgroundRemove", "prompt.improve"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** What each scope lets a key do, as people read it (console forms, error messages). */
export const API_KEY_SCOPE_LABELS: Record<ApiKeyScope, string> = {
  generate: "Generate images (POST /api/v1/generate)",
  "tools.upscale": "Upscale (POST /api/v1/tools/upscale)",
  "tools.styleTransfer": "Style transfer (POST /api/v1/tools/style-transfer)",
  "tools.backgroundRemove": "Background removal (POST /api/v1/tools/background-remove)",
  "prompt.improve": "Prompt improvement (POST /api/v1/prompt/improve)",
};

export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === "string" && (API_KEY_SCOPES as readonly string[]).includes(value);
}
