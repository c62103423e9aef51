/**
 * Finding 3: onnxruntime-node resolved mobile.events.data.microsoft.com (its telemetry) within
 * seconds of loading a model. A running service, after loading and running a model, must resolve no
 * name but the one a request asked it to fetch. The service runs in its own network namespace whose
 * only resolver is a stub on loopback that records every query (needs root and unshare(1)).
 */
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { installModels } from "../../support/installed-models.js";
import { fileTempDir, testTempDir } from "../../support/temp-dir.js";
import { hasMirrorModel } from "../../support/test-assets.js";

const modelsFolder = fileTempDir("test-models");

function canUnshare(): boolean {
  try {
    execFileSync("unshare", ["--net", "--mount", "true"], { stdio: "ignore" });
    return true;
  } catch {
    if (process.env.CI) throw new Error("finding 3's test needs root and unshare(1) (util-linux) in CI.");
    console.warn("\n[notice] unshare --net --mount is not permitted here: skipping the telemetry test.\n");
    return false;
  }
}

const available = hasMirrorModel("superres-espcn-x3") && canUnshare();

describe.skipIf(!available)("finding 3: no outbound name resolution it was not asked for", () => {
  it("resolves only the imageUrl host, never onnxruntime's telemetry host, after running a model", async () => {
    const modelsDir = await installModels(modelsFolder, ["espcn-x3"]);
    const resolvConf = path.join(testTempDir("dns"), "resolv.conf");
    fs.writeFileSync(resolvConf, "nameserver 127.0.0.1\noptions attempts:1 timeout:1\n");
    const child = path.resolve("test/hostile/support/resolving-service.ts");
    const env: NodeJS.ProcessEnv = { ...process.env, HOSTILE_MODELS_DIR: modelsDir, HOSTILE_WAIT_MS: "15000" };
    delete env.ORT_DISABLE_TELEMETRY;
    const script = `ip link set lo up && mount --bind "$1" /etc/resolv.conf && exec "$2" --import tsx "$3"`;
    const output = await new Promise<string>((resolve, reject) =>
      execFile("unshare", ["--net", "--mount", "bash", "-c", script, "ns", resolvConf, process.execPath, child], { env, timeout: 90_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const report = JSON.parse(output.trim().split("\n").at(-1)!) as { upscaled: number; asked: number; queries: string[] };
    expect(report.upscaled).toBe(200);
    // The stub answers NXDOMAIN, so the asked-for host is a 502; that it was queried proves the stub sees lookups.
    expect(report.asked).toBe(502);
    expect(report.queries).toContain("asked-for.example");
    expect([...new Set(report.queries)]).toEqual(["asked-for.example"]);
  }, 120_000);
});
