/**
 * A metered REST call reads the key store once: the facade's early check (before the body is read)
 * hands its key to the procedure, whose middleware would otherwise read the store again. tRPC
 * callers still authenticate in the procedure, job submissions use the early check's key too, and a
 * revoked key is refused on the next call.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { appRouter } from "../../server/router.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { dataUrl, gradientPng } from "../support/test-images.js";

describe("authentication of metered calls", () => {
  let service: TestService;
  let image: string;

  beforeAll(async () => {
    service = await startTestService();
    image = dataUrl(await gradientPng(16, 12));
  });
  afterAll(async () => {
    await service?.close();
  });

  it("reads the key store once per REST call", async () => {
    const key = await service.createKey("once");
    const reads = vi.spyOn(service.services.keys, "authenticate");
    try {
      const response = await service.post("/tools/upscale", { imageUrl: image, scale: 2, model: "lanczos" }, key);
      expect(response.status, await response.clone().text()).toBe(200);
      expect(reads).toHaveBeenCalledTimes(1);
      expect(reads.mock.calls[0]![1]).toBe("tools.upscale");
    } finally {
      reads.mockRestore();
    }
  });

  it("reads it once when the call is submitted as a job", async () => {
    const key = await service.createKey("job");
    const reads = vi.spyOn(service.services.keys, "authenticate");
    try {
      const response = await service.post("/tools/upscale", { imageUrl: image, scale: 2, model: "lanczos" }, key, { prefer: "respond-async" });
      expect(response.status, await response.clone().text()).toBe(202);
      expect(reads).toHaveBeenCalledTimes(1);
      expect(reads.mock.calls[0]![1]).toBe("tools.upscale");
    } finally {
      reads.mockRestore();
    }
  });

  it("reads it once for tRPC over HTTP too, and callers that skip the facade authenticate in the procedure", async () => {
    const key = await service.createKey("trpc");
    const reads = vi.spyOn(service.services.keys, "authenticate");
    try {
      const response = await fetch(`${service.url}/trpc/tools.upscale`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ imageUrl: image, scale: 2, model: "lanczos" }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(reads).toHaveBeenCalledTimes(1);

      const context = (authorization: string) => ({ requestId: "in-process", authorization, setHeader: () => {}, signal: new AbortController().signal, services: service.services });
      const result = await appRouter.createCaller(context(`Bearer ${key}`)).tools.upscale({ imageUrl: image, scale: 2, model: "lanczos" });
      expect(result.data[0]).toMatchObject({ width: 32, height: 24 });
      expect(reads).toHaveBeenCalledTimes(2);
      await expect(appRouter.createCaller(context("Bearer atl_nope_nope")).tools.upscale({ imageUrl: image, scale: 2, model: "lanczos" })).rejects.toThrow(/not valid/);
    } finally {
      reads.mockRestore();
    }
  });

  it("refuses a key on the call after its revocation", async () => {
    const created = await service.services.keys.create({ name: "revoked", hourlyLimit: null });
    const first = await service.post("/tools/upscale", { imageUrl: image, scale: 2, model: "lanczos" }, created.key);
    expect(first.status).toBe(200);
    expect(await service.services.keys.revoke(created.record.id)).toBe(true);
    const second = await service.post("/tools/upscale", { imageUrl: image, scale: 2, model: "lanczos" }, created.key);
    expect(second.status).toBe(401);
    expect(((await second.json()) as { code: string }).code).toBe("UNAUTHORIZED");
  });
});
