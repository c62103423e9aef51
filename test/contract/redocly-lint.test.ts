/**
 * The served OpenAPI document passes Redocly CLI's recommended rules (redocly.yaml) with no error
 * and no warning: a tool nobody here wrote reads the contract as third-party tooling would.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";

const ROOT = path.join(import.meta.dirname, "../..");
let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

describe("Redocly lint of the served document", () => {
  it("reports 0 errors and 0 warnings with the recommended rules", async () => {
    const response = await fetch(`${service.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const file = path.join(service.dataDir, "openapi.json");
    fs.writeFileSync(file, await response.text());
    const { stdout } = await promisify(execFile)(
      path.join(ROOT, "node_modules/.bin/redocly"),
      ["lint", "--config", path.join(ROOT, "redocly.yaml"), "--format", "json", file],
      // Offline and quiet: no telemetry, no update check.
      { cwd: service.dataDir, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }, timeout: 120_000 },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 180_000);
});
