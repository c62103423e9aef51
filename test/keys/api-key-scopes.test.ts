/** The scope list is the router's metered operations: every one of them, and nothing else. */
import { describe, expect, it } from "vitest";
import { API_KEY_SCOPES, API_KEY_SCOPE_LABELS } from "../../server/keys/api-key-scopes.js";
import { appRouter } from "../../server/router.js";

describe("API key scopes", () => {
  it("name exactly the procedures that need a key, with the REST path in each label", () => {
    const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: { openapi?: { path: string; protect?: boolean } } } }>;
    const metered = Object.entries(procedures)
      .filter(([, procedure]) => procedure._def.meta?.openapi?.protect === true)
      .map(([name]) => name)
      .sort();
    expect([...API_KEY_SCOPES].sort()).toEqual(metered);
    for (const scope of API_KEY_SCOPES) {
      expect(API_KEY_SCOPE_LABELS[scope]).toContain(`/api${procedures[scope]!._def.meta!.openapi!.path}`);
    }
  });
});
