/**
 * An Idempotency-Key's request fingerprint hashes a body's long data URLs from their bytes (a slice
 * per turn of the event loop) and is still the SHA-256 of the operation and the body's
 * canonical JSON, so a key bound before the change still matches its retry.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { requestFingerprint } from "../../jobs/idempotency.js";

/** The canonical JSON as the fingerprint has always been defined: keys sorted, JSON.stringify otherwise. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

describe("requestFingerprint", () => {
  it("is the SHA-256 of the canonical JSON, whether a long string is read as text or from its bytes", async () => {
    const imageUrl = `data:image/png;base64,${Buffer.alloc(3_000_000, 7).toString("base64")}`;
    const body = { scale: 2, imageUrl, nested: [{ b: "ü\u2028\"", a: null }, 1.5, true], model: "espcn-x3" };
    const expected = createHash("sha256").update("/v1/tools/upscale").update("\n").update(canonical(body)).digest("hex");
    expect(await requestFingerprint("/v1/tools/upscale", body)).toBe(expected);
    const bytes = Buffer.from(imageUrl, "latin1");
    expect(await requestFingerprint("/v1/tools/upscale", body, (text) => (text === imageUrl ? bytes : undefined))).toBe(expected);
    expect(await requestFingerprint("/v1/tools/upscale", { ...body, scale: 3 }, (text) => (text === imageUrl ? bytes : undefined))).not.toBe(expected);
  });
});
