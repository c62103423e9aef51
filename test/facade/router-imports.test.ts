/**
 * A router whose workers run elsewhere carries no ML stack: `bin/service.ts`, started as
 * `npm start` starts it but with every capability's worker address set, serves real requests through
 * a real worker without loading onnxruntime, sharp, or any module of workers/ beyond the model
 * catalog and the installer. The same process started without worker addresses (the in-process full
 * service) shows that the recorder sees those modules when they are there. (onnxruntime loads in the
 * inference thread on first use; the native library check sees it from any thread.)
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { SqliteApiKeyStore } from "../../server/keys/sqlite-api-key-store.js";
import { startWorkerServer, type RunningWorker } from "../../workers/worker-server.js";
import { dataUrl, gradientPng } from "../support/test-images.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const recorder = path.join(repoRoot, "test", "support", "record-imports.mjs");

/**
 * What a router may load from workers/: nothing. What it shares with them (the catalog, the
 * installer, each operation's request checks, the image reader) lives in models/ and core/.
 */
/** Packages that belong to the workers: their entry points must not be loaded by a router. */
const WORKER_PACKAGES = ["onnxruntime-node", "onnxruntime-common", "sharp", "onnx-proto", "compromise", "@imgly/background-removal-node"];
/** Native libraries of the same. */
const WORKER_LIBRARIES = /onnxruntime|vips|sharp/;

interface Loaded {
  /** Project files (relative to the repository) and package names. */
  files: string[];
  packages: Set<string>;
  sharedObjects: string[];
}

interface RouterProcess {
  url: string;
  /** Sends SIGTERM, waits for the exit, and returns what the process loaded. */
  stop(): Promise<Loaded>;
}

function packageOf(file: string): string | undefined {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  return match?.[1];
}

async function startRouter(env: Record<string, string>, dataDir: string): Promise<RouterProcess> {
  const record = path.join(dataDir, `loaded-${Date.now()}.json`);
  const child = spawn(process.execPath, ["--import", "tsx", "--import", recorder, path.join(repoRoot, "bin", "service.ts")], {
    cwd: repoRoot,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn", ATELIER_DATA_DIR: dataDir, ATELIER_METRICS_PORT: "0", ATELIER_PROVISION_MODELS: "false", RECORD_IMPORTS_TO: record, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+?) /.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`facade exited with ${code} before listening:\n${output}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      expect(await exited, output).toBe(0);
      const { modules, sharedObjects } = JSON.parse(fs.readFileSync(record, "utf8")) as { modules: string[]; sharedObjects: string[] };
      const paths = modules.filter((url) => url.startsWith("file:")).map((url) => fileURLToPath(url));
      return {
        files: paths.filter((file) => !file.includes("node_modules")).map((file) => path.relative(repoRoot, file)),
        packages: new Set(paths.map(packageOf).filter((name) => name !== undefined)),
        sharedObjects,
      };
    },
  };
}

describe("a router-only process (workers elsewhere)", () => {
  let dataDir: string;
  let worker: RunningWorker;
  let key: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-router-imports-"));
    const config = loadConfig({ LOG_LEVEL: "silent", ATELIER_DATA_DIR: dataDir });
    worker = await startWorkerServer(config, createLogger("silent"), { host: "127.0.0.1", port: 0 });
    const keys = SqliteApiKeyStore.open(dataDir);
    key = (await keys.create({ name: "router-imports", hourlyLimit: null })).key;
    await keys.close();
  });

  afterAll(async () => {
    await worker?.shutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves the API through a remote worker without loading onnxruntime, sharp or model code", async () => {
    const router = await startRouter({ ATELIER_WORKER_ADDRESS: worker.address }, dataDir);
    const models = await fetch(`${router.url}/api/v1/models`);
    expect(models.status).toBe(200);
    const upscale = await fetch(`${router.url}/api/v1/tools/upscale`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ imageUrl: dataUrl(await gradientPng(16, 12)), scale: 2, model: "lanczos" }),
    });
    expect(upscale.status, await upscale.clone().text()).toBe(200);
    const loaded = await router.stop();

    // The recorder saw the router itself load: the check below is not vacuous.
    expect(loaded.files).toContain(path.join("facade", "app.ts"));
    expect(loaded.files).toContain(path.join("server", "router.ts"));
    expect(loaded.packages).toContain("@grpc/grpc-js");

    const workerFiles = loaded.files.map((file) => file.split(path.sep).join("/")).filter((file) => file.startsWith("workers/"));
    expect(workerFiles).toEqual([]);
    expect(WORKER_PACKAGES.filter((name) => loaded.packages.has(name))).toEqual([]);
    // Nor the drivers of stores it was not configured with (PostgreSQL, Redis): they load on demand.
    expect(["pg", "ioredis"].filter((name) => loaded.packages.has(name))).toEqual([]);
    expect(loaded.sharedObjects.filter((file) => WORKER_LIBRARIES.test(path.basename(file)))).toEqual([]);
  });

  it("the in-process full service, by contrast, is seen loading the workers and sharp", async () => {
    const full = await startRouter({}, dataDir);
    const loaded = await full.stop();
    expect(loaded.files).toContain(path.join("workers", "worker-server.ts"));
    expect(loaded.packages).toContain("sharp");
    expect(loaded.sharedObjects.some((file) => WORKER_LIBRARIES.test(path.basename(file)))).toBe(true);
  });
});
