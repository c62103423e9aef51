/**
 * Every process that serves calls sets the service's heap growth (core/heap-growth.ts) as it starts:
 * a worker server, and a router whether its workers run in it or elsewhere.
 */
import v8 from "node:v8";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../core/config.js";
import { HEAP_GROWING_PERCENT } from "../../core/heap-growth.js";
import { createLogger } from "../../core/logger.js";
import { startAtelier, type RunningAtelier } from "../../bin/start-atelier.js";
import { startWorkerServer, type RunningWorker } from "../../workers/worker-server.js";
import { fileTempDir } from "../support/temp-dir.js";

const FLAG = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
const logger = createLogger("silent");
// One router at most runs at a time, and workers keep nothing in a data folder: one of each serves all.
const dataDir = fileTempDir("test");
const modelsDir = fileTempDir("no-models");
const config = (env: Record<string, string> = {}) =>
  loadConfig({ ATELIER_DATA_DIR: dataDir, ATELIER_MODELS_DIR: modelsDir, ATELIER_PROVISION_MODELS: "false", LOG_LEVEL: "silent", ...env });

describe("the service's heap growth", () => {
  const stops: (() => Promise<unknown>)[] = [];
  afterEach(() => vi.restoreAllMocks());
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  const flagsSet = () => vi.spyOn(v8, "setFlagsFromString");

  it("a worker server sets it as it starts", async () => {
    const spy = flagsSet();
    const worker: RunningWorker = await startWorkerServer(config(), logger, { host: "127.0.0.1", port: 0 });
    stops.push(() => worker.shutdown(0));
    expect(spy).toHaveBeenCalledWith(FLAG);
  });

  it("a router with its workers elsewhere sets it too", async () => {
    const worker = await startWorkerServer(config(), logger, { host: "127.0.0.1", port: 0 });
    stops.push(() => worker.shutdown(0));
    const spy = flagsSet();
    const router: RunningAtelier = await startAtelier(config({ ATELIER_WORKER_ADDRESS: worker.address }), logger);
    stops.push(() => router.close());
    expect(router.worker).toBeUndefined();
    expect(spy).toHaveBeenCalledWith(FLAG);
  });
});
