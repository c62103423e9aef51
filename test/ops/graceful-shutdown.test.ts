/**
 * SIGTERM to a real `npm start` process while a request is running: readiness turns 503 at once,
 * new connections are refused, the running request gets its full 200, and the process exits 0.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { openApiKeyStore } from "../../server/keys/open-api-key-store.js";
import { bytesOfDataUrl, gradientPng } from "../support/test-images.js";
import { makeTempDir } from "../support/temp-dir.js";
import { mainProcessEnv, startMainProcess } from "../support/main-process.js";

const dataDir = makeTempDir("test");
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
    const env = mainProcessEnv(dataDir, {
      ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1",
      ATELIER_SHUTDOWN_GRACE_MS: "20000",
    });
    const keys = await openApiKeyStore(loadConfig(env));
    const { key } = await keys.create({ name: "shutdown", hourlyLimit: null });
    await keys.close();

    const started = await startMainProcess(env);
    child = started.child;
    const { url, output, exited } = started;

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
