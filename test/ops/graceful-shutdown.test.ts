/**
 * SIGTERM to a real `npm start` process while a request is running: readiness turns 503 at once,
 * new connections are refused, the running request gets its full 200, and the process exits 0.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import readline from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { openApiKeyStore } from "../../server/keys/open-api-key-store.js";
import { bytesOfDataUrl, gradientPng } from "../support/test-images.js";
import { makeDataDir } from "../support/test-service.js";

const dataDir = makeDataDir();
let child: ChildProcess | undefined;
let imageServer: http.Server | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  imageServer?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** An image host that holds each request until the test releases it: the "long request". */
async function startSlowImageServer(png: Buffer) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const requested = new Promise<void>((resolve) => (arrived = resolve));
  imageServer = http.createServer((_req, res) => {
    arrived();
    void released.then(() => res.writeHead(200, { "content-type": "image/png", "content-length": png.length }).end(png));
  });
  await new Promise<void>((resolve) => imageServer!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(imageServer.address() as AddressInfo).port}/photo.png`, requested, release };
}

describe("graceful shutdown of a real service process", () => {
  it("finishes the request in flight with a full 200, refuses new work, and exits 0", async () => {
    const env = {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      ATELIER_DATA_DIR: dataDir,
      ATELIER_METRICS_PORT: "0",
      ATELIER_PROVISION_MODELS: "false",
      ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1",
      ATELIER_SHUTDOWN_GRACE_MS: "20000",
    };
    const keys = await openApiKeyStore(loadConfig(env));
    const { key } = await keys.create({ name: "shutdown", hourlyLimit: null });
    await keys.close();

    child = spawn(process.execPath, ["--import", "tsx", "facade/main.ts"], { env, stdio: ["ignore", "pipe", "inherit"] });
    const output: string[] = [];
    const url = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child!.stdout! }).on("line", (line) => {
        output.push(line);
        const match = /^Atelier is listening on (\S+)/.exec(line);
        if (match) resolve(match[1]!);
      });
      child!.once("exit", (code) => reject(new Error(`service exited with ${code}: ${output.join("\n")}`)));
    });
    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));

    const png = await gradientPng(40, 30);
    const slow = await startSlowImageServer(png);
    const pending = fetch(`${url}/api/v1/tools/upscale`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ imageUrl: slow.url, scale: 2 }),
    });
    await slow.requested;

    child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The listener is closed: a new connection is refused (or, on a kept-alive one, answered 503).
    const late = await fetch(`${url}/readyz`, { headers: { connection: "close" } }).then(
      (response) => response.status,
      (error: Error) => (error.cause as { code?: string } | undefined)?.code ?? error.message,
    );
    expect([503, "ECONNREFUSED"]).toContain(late);
    expect(child.exitCode).toBeNull(); // still finishing the request

    slow.release();
    const response = await pending;
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { url: string; width: number; height: number }[] };
    expect(body.data[0]).toMatchObject({ width: 80, height: 60 });
    expect(bytesOfDataUrl(body.data[0]!.url).subarray(1, 4).toString("latin1")).toBe("PNG");

    expect(await exited).toBe(0);
    const logs = output.join("\n");
    expect(logs).toContain("shutting down: not ready, finishing requests in flight");
    expect(logs).toContain("shut down cleanly");
  }, 60_000);
});
