/** The router and facade calling a worker that runs as its own process (`npm run start:workers`). */
import { spawn, type ChildProcess } from "node:child_process";
import readline from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

let workerProcess: ChildProcess;
let workerAddress: string;
let service: TestService;

beforeAll(async () => {
  workerProcess = spawn(process.execPath, ["--import", "tsx", "bin/workers.ts"], {
    env: { ...process.env, ATELIER_WORKER_HOST: "127.0.0.1", ATELIER_WORKER_PORT: "0", LOG_LEVEL: "info", ATELIER_METRICS_PORT: "0", ATELIER_PROVISION_MODELS: "false" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  workerAddress = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: workerProcess.stdout! });
    lines.on("line", (line) => {
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg === "worker listening" && entry.address) resolve(entry.address);
    });
    workerProcess.once("exit", (code) => reject(new Error(`worker exited with ${code}`)));
  });
  service = await startTestService({ ATELIER_WORKER_ADDRESS: workerAddress });
});

afterAll(async () => {
  await service?.close();
  workerProcess?.kill("SIGTERM");
});

describe("workers in a separate process", () => {
  it("serves every capability from the configured address, starting none in-process", async () => {
    expect(service.worker).toBeUndefined();
    const key = await service.createKey();
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(await gradientPng(10, 6)), scale: 5 }, key);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: { width: number }[] }).data[0]!.width).toBe(50);
    const models = await fetch(`${service.url}/api/v1/models`);
    expect(models.status).toBe(200);
  });

  it("answers 503 WORKER_UNAVAILABLE, uncharged, when the worker is gone", async () => {
    const key = await service.createKey("outage", 5);
    workerProcess.kill("SIGTERM");
    await new Promise((resolve) => workerProcess.once("exit", resolve));
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(await gradientPng(4, 4)) }, key);
    expect(response.status).toBe(503);
    expect(((await response.json()) as { code: string }).code).toBe("WORKER_UNAVAILABLE");
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(response.headers.get("x-ratelimit-remaining")).toBe("5");
  });
});
