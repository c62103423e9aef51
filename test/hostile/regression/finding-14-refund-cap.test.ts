/**
 * Finding 14: every request that failed with a 5xx was refunded, so a caller who can make the
 * server fail gets unlimited work. Refunds are capped per key per window
 * (ATELIER_QUOTA_MAX_REFUNDS); later failures stay charged, and every failure is counted in metrics.
 */
import { register } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataUrl, gradientPng } from "../../support/test-images.js";
import { startTestService, type TestService } from "../../support/test-service.js";

let service: TestService;
beforeAll(async () => {
  // No models installed: a style transfer answers 503 MODEL_NOT_INSTALLED, a server-side failure.
  service = await startTestService({ ATELIER_QUOTA_MAX_REFUNDS: "3" });
});
afterAll(() => service?.close());

async function failureCount(refunded: boolean): Promise<number> {
  const metric = await register.getSingleMetric("atelier_server_failures_total")?.get();
  return metric?.values.find((value) => value.labels.code === "MODEL_NOT_INSTALLED" && value.labels.refunded === String(refunded))?.value ?? 0;
}

describe("finding 14: capped refunds for server failures", () => {
  it("refunds the first 3 failures of a key in the window, charges the rest, and counts them all", async () => {
    const key = await service.createKey("failing", 100);
    const imageUrl = dataUrl(await gradientPng(8, 8));
    const [refundedBefore, chargedBefore] = [await failureCount(true), await failureCount(false)];
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await service.post("/tools/style-transfer", { imageUrl, style: "udnie" }, key);
      expect(response.status).toBe(503);
      remaining.push(response.headers.get("x-ratelimit-remaining")!);
    }
    expect(remaining).toEqual(["100", "100", "100", "99", "98", "97"]);
    expect(await failureCount(true)).toBe(refundedBefore + 3);
    expect(await failureCount(false)).toBe(chargedBefore + 3);
    // Another key has its own refunds.
    const other = await service.createKey("other", 100);
    const response = await service.post("/tools/style-transfer", { imageUrl, style: "udnie" }, other);
    expect(response.headers.get("x-ratelimit-remaining")).toBe("100");
  });
});
