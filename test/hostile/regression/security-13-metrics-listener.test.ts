/**
 * Security review, item 13, and its usability twin: the unauthenticated metrics listener.
 * - With `HOST=0.0.0.0` (the container case) it listened on every interface too; now it binds
 *   loopback unless ATELIER_METRICS_HOST says otherwise.
 * - It listened on 9464 by default, so a second `npm start` on the same host failed on the taken
 *   port; now metrics are served only when ATELIER_METRICS_PORT is set, and two services with
 *   different PORTs start side by side.
 */
import fs from "node:fs";
import os from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { createLogger } from "../../../core/logger.js";
import { startAtelier, type RunningAtelier } from "../../../bin/start-atelier.js";
import { startMetricsServer, type MetricsServer } from "../../../observability/metrics-server.js";
import { startBanner } from "../../../operations/start-banner.js";
import { freeLoopbackPort } from "../../support/free-port.js";
import { makeTempDir } from "../../support/temp-dir.js";

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** The local addresses of the TCP sockets listening on `port`, as the kernel reports them (Linux's /proc/net). */
function listeningAddresses(port: number): string[] {
  const found: string[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of fs.readFileSync(file, "utf8").split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== "0A") continue; // 0A: LISTEN
      const [address, portHex] = local.split(":") as [string, string];
      if (parseInt(portHex, 16) !== port) continue;
      if (address.length !== 8) found.push(`ipv6:${address}`);
      else {
        // The kernel prints the address as a number in the machine's byte order.
        const bytes = address.match(/../g)!.map((byte) => parseInt(byte, 16));
        found.push((os.endianness() === "LE" ? bytes.reverse() : bytes).join("."));
      }
    }
  }
  return found;
}

describe("metrics listen on loopback unless told otherwise", () => {
  it("binds 127.0.0.1 only when HOST is 0.0.0.0", async () => {
    const port = await freeLoopbackPort();
    const config = loadConfig({ HOST: "0.0.0.0", ATELIER_METRICS_PORT: String(port) });
    expect(config.http.host).toBe("0.0.0.0");
    expect(config.metrics).toEqual({ port, host: "127.0.0.1" });
    const metrics = await startMetricsServer(config.metrics, createLogger("silent"));
    try {
      expect(listeningAddresses(port)).toEqual(["127.0.0.1"]);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    } finally {
      await metrics?.close();
    }
  });

  it("takes another interface only from ATELIER_METRICS_HOST", () => {
    expect(loadConfig({ HOST: "0.0.0.0", ATELIER_METRICS_PORT: "9464", ATELIER_METRICS_HOST: "0.0.0.0" }).metrics).toEqual({ port: 9464, host: "0.0.0.0" });
  });
});

describe("metrics are off unless their port is set", () => {
  it("defaults to no metrics listener, on loopback when one is set", () => {
    expect(loadConfig({}).metrics).toEqual({ port: 0, host: "127.0.0.1" });
  });

  it("starts two services with different PORTs side by side", async () => {
    // What `npm start` (bin/service.ts) runs, minus its signal handlers, each from an environment
    // that names no ATELIER_METRICS_* variable.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ATELIER_METRICS_")));
    const logger = createLogger("silent");
    const ateliers: RunningAtelier[] = [];
    const listeners: MetricsServer[] = [];
    try {
      for (const port of [await freeLoopbackPort(), await freeLoopbackPort()]) {
        const dataDir = makeTempDir("test");
        dataDirs.push(dataDir);
        const config = loadConfig({ ...inherited, HOST: "127.0.0.1", PORT: String(port), ATELIER_DATA_DIR: dataDir, ATELIER_PROVISION_MODELS: "false" });
        const atelier = await startAtelier(config, logger);
        ateliers.push(atelier);
        const metrics = await startMetricsServer(config.metrics, logger);
        if (metrics) listeners.push(metrics);
        expect(metrics).toBeUndefined();
        expect(await startBanner(config, atelier.url, { metrics, provisioner: undefined }, false)).toMatch(/Metrics: +off \(set ATELIER_METRICS_PORT/);
        expect(atelier.url).toBe(`http://127.0.0.1:${port}`);
      }
      for (const atelier of ateliers) expect((await fetch(`${atelier.url}/healthz`)).status).toBe(200);
    } finally {
      for (const listener of listeners) await listener.close();
      for (const atelier of ateliers) await atelier.close();
    }
  });
});
