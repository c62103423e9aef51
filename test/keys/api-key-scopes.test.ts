/** The scope list is the metered operations: every one of them, and nothing else. */
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../contract/operations.js";
import { API_KEY_SCOPES, API_KEY_SCOPE_LABELS } from "../../server/keys/api-key-scopes.js";

describe("API key scopes", () => {
  it("name exactly the procedures that need a key, with the REST path in each label", () => {
    const procedures = Object.fromEntries(OPERATIONS.map((operation) => [operation.id, operation]));
    const metered = OPERATIONS.filter((operation) => "metered" in operation)
      .map((operation) => operation.id as string)
      .sort();
    expect([...API_KEY_SCOPES].sort()).toEqual(metered);
    for (const scope of API_KEY_SCOPES) {
      expect(API_KEY_SCOPE_LABELS[scope]).toContain(`/api${procedures[scope]!.path}`);
    }
  });
});
