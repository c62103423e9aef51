/** Operations settings: documented defaults, validation that names the variable, and a quiet .npmrc. */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { problemsOf } from "../support/config-problems.js";

describe("operations configuration", () => {
  it("defaults: metrics off (on loopback once a port is set), CORS off, 30 s grace, provisioning on, and no model mirror", () => {
    const config = loadConfig({});
    expect(config.metrics).toEqual({ port: 0, host: "127.0.0.1" });
    expect(config.corsOrigins).toEqual([]);
    expect(config.shutdownGraceMs).toBe(30_000);
    expect(config.provisionModels).toBe(true);
    // No product default points into a development folder: CI and tests pass the mirror explicitly.
    expect(config.modelMirror).toBeUndefined();
  });

  it("reads the mirror as a folder or URL, metrics host and port, origins and flags", () => {
    const config = loadConfig({
      ATELIER_MODEL_MIRROR: "mirror",
      ATELIER_METRICS_PORT: "0",
      ATELIER_METRICS_HOST: "0.0.0.0",
      ATELIER_CORS_ORIGINS: "https://app.example.com, http://localhost:5173",
      ATELIER_PROVISION_MODELS: "no",
    });
    expect(config.modelMirror).toBe(path.resolve("mirror"));
    expect(loadConfig({ ATELIER_MODEL_MIRROR: "https://models.example.com/mirror" }).modelMirror).toBe("https://models.example.com/mirror");
    expect(config.metrics).toEqual({ port: 0, host: "0.0.0.0" });
    expect(config.corsOrigins).toEqual(["https://app.example.com", "http://localhost:5173"]);
    expect(config.provisionModels).toBe(false);
  });

  it("names the variable of every bad value", () => {
    const problems = problemsOf({
      ATELIER_METRICS_PORT: "metrics",
      ATELIER_CORS_ORIGINS: "https://app.example.com/path",
      ATELIER_SHUTDOWN_GRACE_MS: "-1",
      ATELIER_PROVISION_MODELS: "maybe",
    });
    expect(problems).toHaveLength(4);
    for (const name of ["ATELIER_METRICS_PORT", "ATELIER_CORS_ORIGINS", "ATELIER_SHUTDOWN_GRACE_MS", "ATELIER_PROVISION_MODELS"]) {
      expect(problems.some((problem) => problem.startsWith(`${name}: `)), name).toBe(true);
    }
  });

  it("has an .npmrc npm does not warn about", async () => {
    const { stdout, stderr } = await promisify(execFile)("npm", ["config", "get", "strict-allow-scripts"], { env: { ...process.env, npm_config_loglevel: "warn" } });
    expect(stdout.trim()).toBe("true");
    expect(stderr).not.toMatch(/warn/i);
  });
});
