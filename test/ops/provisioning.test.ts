/**
 * First-start provisioning against real mirrors served over HTTP: models arrive in the background,
 * an operation whose model is still on its way answers 503 with Retry-After and the progress, the
 * model works once installed, and without network the service says so once and keeps serving.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { ModelProvisioner } from "../../operations/provisioning/model-provisioner.js";
import { STARTER_MODELS } from "../../models/catalog/starter-models.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { freeLoopbackPort } from "../support/free-port.js";
import { hasMirrorModel, modelMirror } from "../support/test-assets.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { testTempDir } from "../support/temp-dir.js";
import { startTestService, type TestService } from "../support/test-service.js";

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

describe("the starter set", () => {
  it("is all in the catalog, permissively licensed and pinned, so it can be fetched unasked", () => {
    for (const id of STARTER_MODELS) {
      const entry = catalogEntry(id);
      expect(entry, id).toBeDefined();
      expect(entry!.nonCommercial, id).toBe(false);
      expect(entry!.source.kind, id).toBe("files");
    }
  });
});

const haveMirror = hasMirrorModel("style-fast-ml5") && hasMirrorModel("superres-espcn-x3");

describe.skipIf(!haveMirror)("provisioning from an HTTP mirror", () => {
  let mirror: http.Server;
  let service: TestService;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let stalled!: () => void;
  const stalledNow = new Promise<void>((resolve) => (stalled = resolve));
  let mathuraFiles = 0;

  beforeAll(async () => {
    // Serves the mirror folder; the mathura weights stop halfway until the test releases them.
    mirror = http.createServer((req, res) => {
      const file = path.join(modelMirror, decodeURIComponent(new URL(req.url!, "http://x").pathname));
      if (!file.startsWith(modelMirror) || !fs.existsSync(file)) return void res.writeHead(404).end();
      const bytes = fs.readFileSync(file);
      res.writeHead(200, { "content-length": bytes.length });
      // mathura is 49 checkpoint files: the 25th stops halfway.
      if (!file.includes("mathura") || ++mathuraFiles !== 25) return void res.end(bytes);
      res.write(bytes.subarray(0, bytes.length >> 1));
      stalled();
      void released.then(() => res.end(bytes.subarray(bytes.length >> 1)));
    });
    await new Promise<void>((resolve) => mirror.listen(0, "127.0.0.1", resolve));
    service = await startTestService({ ATELIER_MODEL_MIRROR: `http://127.0.0.1:${(mirror.address() as AddressInfo).port}` });
  });
  afterAll(async () => {
    release();
    await service?.close();
    mirror?.closeAllConnections();
    mirror?.close();
  });

  it("answers 503 with Retry-After and progress while the model arrives, then serves it", async () => {
    const { logger, lines } = capturingLogger();
    const provisioner = new ModelProvisioner(service.config, logger, ["espcn-x3", "mathura"]).start();
    service.readiness.add(provisioner.check());
    await stalledNow;
    const mathura = () => provisioner.status().models.find((model) => model.id === "mathura")!;
    // Wait until the bytes sent before the stall have all been counted.
    for (let seen = -1; mathura().receivedBytes !== seen; await new Promise((resolve) => setTimeout(resolve, 200))) seen = mathura().receivedBytes;
    const percent = Math.floor((100 * mathura().receivedBytes) / mathura().totalBytes);
    expect(percent).toBeGreaterThan(10);

    const key = await service.createKey();
    const image = dataUrl(await gradientPng(32, 32));
    const early = await service.post("/tools/style-transfer", { imageUrl: image, style: "mathura" }, key);
    const failure = (await early.json()) as { code: string; message: string };
    expect(early.status).toBe(503);
    expect(early.headers.get("retry-after")).toBe("15");
    expect(failure.code).toBe("MODEL_NOT_INSTALLED");
    expect(failure.message).toMatch(/"mathura" is still being installed on this server \(first start\): (\d+)% of 6\.7 MB received/);
    expect(Number(/: (\d+)%/.exec(failure.message)![1])).toBe(percent);

    const ready = await fetch(`${service.url}/readyz`);
    const report = (await ready.json()) as { ready: boolean; checks: { name: string; detail: string }[] };
    expect(ready.status).toBe(200); // downloads never take the service out of rotation
    expect(report.checks.find((check) => check.name === "provisioning")?.detail).toMatch(/^installing starter models from http:\/\/127\.0\.0\.1:\d+: 1 installed, 1 to go, \d+% of 7\.0 MB$/);

    release();
    await provisioner.done();
    expect(provisioner.status()).toMatchObject({ state: "done", models: [{ id: "espcn-x3", state: "installed" }, { id: "mathura", state: "installed" }] });
    expect(lines.filter((line) => line.msg === "starter model installed")).toHaveLength(2);
    const after = await service.post("/tools/style-transfer", { imageUrl: image, style: "mathura" }, key);
    expect(after.status).toBe(200);
    expect(((await after.json()) as { model: string }).model).toBe("mathura");
  }, 120_000);
});

describe("provisioning without network", () => {
  it("logs once, clearly, marks the rest not installed, and leaves nothing half-installed", async () => {
    const dataDir = testTempDir("test");
    const closedPort = await freeLoopbackPort();
    const config = loadConfig({ ATELIER_DATA_DIR: dataDir, ATELIER_MODEL_MIRROR: `http://127.0.0.1:${closedPort}` });
    const { logger, lines } = capturingLogger();
    const provisioner = new ModelProvisioner(config, logger, ["espcn-x3", "portrait-selfie", "matta"]).start();
    await provisioner.done();
    const status = provisioner.status();
    expect(status.state).toBe("offline");
    expect(status.models.map((model) => model.state)).toEqual(["failed", "failed", "failed"]);
    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+ \(no network\?\): serving the models already installed\. Install the rest later with `npm run models -- pull espcn-x3 portrait-selfie matta`/);
    const check = await provisioner.check().run(new AbortController().signal);
    expect(check.detail).toBe("no network: 3 starter model(s) not installed; serving what is installed");
    expect(fs.readdirSync(config.modelsDir).filter((name) => !name.startsWith("."))).toEqual([]);
  });
});
