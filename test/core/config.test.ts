import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, defaultOf, loadConfig, SETTING_SECTIONS, SETTINGS, type Setting } from "../../core/config.js";

describe("loadConfig", () => {
  it("has documented defaults", () => {
    const config = loadConfig({});
    expect(config.http).toMatchObject({ host: "127.0.0.1", port: 8080 });
    expect(config.quota).toEqual({ defaultLimit: 100, windowSeconds: 3600, maxRefunds: 10 });
    expect(config.dataDir).toBe(path.resolve("data"));
    expect(config.modelsDir).toBe(path.resolve("data", "models"));
    expect(config.images.maxOutputPixels).toBe(4096 * 4096);
    expect(config.fetch).toMatchObject({ maxRedirects: 3, allowedPrivateHosts: [] });
    expect(config.workers.addresses).toEqual({});
    expect(config.inference.spinning).toBe(false);
    expect(loadConfig({ ATELIER_ONNX_SPINNING: "true" }).inference.spinning).toBe(true);
  });

  it("reads lists and per-service worker addresses, the shared address filling the rest", () => {
    const config = loadConfig({
      ATELIER_ALLOWED_PRIVATE_HOSTS: " 10.0.0.0/8, images.internal ,",
      ATELIER_WORKER_ADDRESS: "workers:50051",
      ATELIER_UPSCALE_WORKER: "ipv4:10.0.0.5:50051,10.0.0.6:50051",
    });
    expect(config.fetch.allowedPrivateHosts).toEqual(["10.0.0.0/8", "images.internal"]);
    expect(config.workers.addresses.upscale).toBe("ipv4:10.0.0.5:50051,10.0.0.6:50051");
    expect(config.workers.addresses.catalog).toBe("workers:50051");
  });

  it("reports every bad variable at once", () => {
    let failure: unknown;
    try {
      loadConfig({ PORT: "http", ATELIER_RATE_LIMIT_PER_HOUR: "0", LOG_LEVEL: "loud" });
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ConfigError);
    const problems = (failure as ConfigError).problems.join("\n");
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/ATELIER_RATE_LIMIT_PER_HOUR/);
    expect(problems).toMatch(/LOG_LEVEL/);
  });

  it("applies the default each setting documents, and tells it in readable units", () => {
    for (const [name, entry] of Object.entries(SETTINGS) as [string, Setting][]) {
      expect(SETTING_SECTIONS, name).toContain(entry.section);
      expect(entry.meaning.length, name).toBeGreaterThan(10);
      if (entry.value !== undefined) expect(entry.schema.parse(undefined), name).toBe(entry.value);
    }
    expect(defaultOf("ATELIER_MAX_OUTPUT_PIXELS")).toBe("16.8 MP");
    expect(defaultOf("ATELIER_MAX_IMAGE_BYTES")).toBe("25 MiB");
    expect(defaultOf("ATELIER_UPSCALE_TIME_BUDGET_MS")).toBe("10 s");
    expect(defaultOf("ATELIER_RATE_LIMIT_PER_HOUR")).toBe(String(loadConfig({}).quota.defaultLimit));
  });
});
