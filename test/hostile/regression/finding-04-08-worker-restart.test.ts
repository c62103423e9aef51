/**
 * Finding 4: a worker shut down mid-request gave the client 499 CANCELLED, without Retry-After and
 * charged. It is the server's unavailability: the router retries the call once on another ready
 * replica, and with none answers 503 WORKER_UNAVAILABLE with Retry-After, not charged.
 * Finding 8: after a worker restart the router kept answering 503 for about 8 s (gRPC reconnect
 * backoff); the first request after the worker listens again must be served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { createLogger } from "../../../core/logger.js";
import { startWorkerServer, type RunningWorker } from "../../../workers/worker-server.js";
import { dataUrl, gradientPng } from "../../support/test-images.js";
import { fileTempDir } from "../../support/temp-dir.js";
import { startTestService, type TestService } from "../../support/test-service.js";

const workerConfig = loadConfig({ LOG_LEVEL: "silent", ATELIER_DATA_DIR: fileTempDir("test") });
const startWorker = (port = 0) => startWorkerServer(workerConfig, createLogger("silent"), { host: "127.0.0.1", port });

let first: RunningWorker;
let second: RunningWorker;
let service: TestService;
let slowImage: string;

beforeAll(async () => {
  [first, second] = await Promise.all([startWorker(), startWorker()]);
  service = await startTestService({ ATELIER_WORKER_ADDRESS: `ipv4:127.0.0.1:${first.port},127.0.0.1:${second.port}` });
  // Lanczos x4 to 2000x2000 takes over a second on two cores: long enough to be killed mid-call.
  slowImage = dataUrl(await gradientPng(500, 500));
});
// Closing waits for the router's channels to the killed and restarted workers: generous on a loaded machine.
afterAll(async () => {
  await service?.close();
  await Promise.all([first?.shutdown(0), second?.shutdown(0)]);
}, 180_000);

const slowUpscale = (key: string) => service.post("/tools/upscale", { imageUrl: slowImage, scale: 4, model: "lanczos" }, key);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("finding 4: worker shutdown mid-request", () => {
  it("retries on the other replica: both of two concurrent calls succeed when one worker is killed under them", async () => {
    const key = await service.createKey("retry", 100);
    // The upscale channel connected to both replicas first, so round-robin gives each one of the two calls.
    const tiny = dataUrl(await gradientPng(4, 4));
    await Promise.all([1, 2].map(() => service.post("/tools/upscale", { imageUrl: tiny, scale: 2, model: "lanczos" }, key)));
    const calls = [slowUpscale(key), slowUpscale(key)];
    await sleep(300);
    await first.shutdown(0);
    const responses = await Promise.all(calls);
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
  }, 60_000);

  it("with no replica left answers 503 WORKER_UNAVAILABLE with Retry-After, and does not charge", async () => {
    const key = await service.createKey("outage", 10);
    const call = slowUpscale(key);
    await sleep(300);
    await second.shutdown(0);
    const response = await call;
    const body = (await response.json()) as { code: string };
    expect([response.status, body.code]).toEqual([503, "WORKER_UNAVAILABLE"]);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(response.headers.get("x-ratelimit-remaining")).toBe("10");
  }, 60_000);
});

describe("finding 8: recovery after a worker restart", () => {
  it("serves the first request sent once the worker listens again", async () => {
    const key = await service.createKey("restart", 100);
    // Both workers have been down for a while, with calls failing meanwhile, so the backoff has grown.
    for (let i = 0; i < 4; i++) {
      expect((await service.post("/prompt/improve", { prompt: "a cat" }, key)).status).toBe(503);
      await sleep(1000);
    }
    second = await startWorker(second.port);
    const started = performance.now();
    const response = await service.post("/prompt/improve", { prompt: "a cat" }, key);
    expect(response.status).toBe(200);
    console.log(`finding 8: first request after the restart served in ${Math.round(performance.now() - started)} ms`);
  }, 60_000);
});
