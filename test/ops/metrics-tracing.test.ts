/**
 * Metrics on their own port and the request's trace, end to end: a REST call carrying a W3C
 * `traceparent` is logged with that trace, its key id and model, reaches the gRPC worker with the
 * trace in its metadata, and shows up in `/metrics` by operation, status, model and stage.
 */
import fs from "node:fs";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../core/config.js";
import { startAtelier, type RunningAtelier } from "../../bin/start-atelier.js";
import { startMetricsServer, type MetricsServer } from "../../observability/metrics-server.js";
import { freeLoopbackPort } from "../support/free-port.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { makeTempDir } from "../support/temp-dir.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN = "00f067aa0ba902b7";

let atelier: RunningAtelier;
let metrics: MetricsServer;
let dataDir: string;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  dataDir = makeTempDir("test");
  const config = loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    ATELIER_DATA_DIR: dataDir,
    ATELIER_METRICS_PORT: String(await freeLoopbackPort()),
    ATELIER_PROVISION_MODELS: "false",
  });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const logger = pino({ level: "debug" }, sink);
  atelier = await startAtelier(config, logger);
  metrics = (await startMetricsServer(config.metrics, logger))!;
});

afterAll(async () => {
  await metrics?.close();
  await atelier?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function scrape(): Promise<string> {
  const response = await fetch(metrics.url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one sample, e.g. `sample(text, 'atelier_http_requests_total{operation="x"}')`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf("}"));
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

describe("metrics and trace context", () => {
  it("serves Prometheus text only at /metrics on the metrics port, not on the API port", async () => {
    expect((await fetch(metrics.url.replace("/metrics", "/other"))).status).toBe(404);
    expect((await fetch(`${atelier.url}/metrics`)).status).toBe(404);
    // Each scrape probes the worker's gRPC health with a short deadline, which a first connection on a
    // loaded machine can miss: the gauge must read 1 once the worker answers, not on the first try.
    const text = await vi.waitFor(
      async () => {
        const scraped = await scrape();
        expect(sample(scraped, "atelier_worker_up", { service: "upscale" })).toBe(1);
        return scraped;
      },
      { timeout: 20_000, interval: 500 },
    );
    expect(text).toContain("atelier_process_cpu_user_seconds_total");
    expect(text).toContain("atelier_nodejs_eventloop_lag_seconds");
    expect(sample(text, "atelier_queue_depth", { state: "waiting" })).toBe(0);
  });

  it("logs and counts a traced REST call through the gRPC worker, and counts quota rejections", async () => {
    const created = await atelier.services.keys.create({ name: "metrics", hourlyLimit: 1 });
    const image = dataUrl(await gradientPng(24, 16));
    const request = () =>
      fetch(`${atelier.url}/api/v1/tools/upscale`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${created.key}`, traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01` },
        body: JSON.stringify({ imageUrl: image, scale: 2, model: "esrgan-slim" }),
      });
    const ok = await request();
    expect(ok.status).toBe(200);
    expect(ok.headers.get("traceresponse")).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    const requestId = ok.headers.get("x-request-id");
    expect((await request()).status).toBe(429);

    const line = logLines.find((entry) => entry.msg === "request" && entry.requestId === requestId);
    expect(line).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT_SPAN, operation: "tools.upscale", status: 200, keyId: created.record.id, model: "esrgan-slim" });
    expect(typeof line!.ms).toBe("number");
    expect(JSON.stringify(logLines)).not.toContain(created.key);
    // The worker saw the same trace, with the router's span as its parent.
    const call = logLines.find((entry) => entry.method === "Upscale" && entry.msg === "call done");
    expect(call?.traceparent).toBe(`00-${TRACE_ID}-${line!.spanId as string}-01`);

    const text = await scrape();
    expect(sample(text, "atelier_http_requests_total", { operation: "tools.upscale", transport: "rest", status: "200" })).toBe(1);
    expect(sample(text, "atelier_http_requests_total", { operation: "tools.upscale", transport: "rest", status: "429" })).toBe(1);
    expect(sample(text, "atelier_http_request_duration_seconds_count", { operation: "tools.upscale", status: "200" })).toBe(1);
    expect(sample(text, "atelier_quota_rejections_total", { operation: "tools.upscale" })).toBe(1);
    expect(sample(text, "atelier_inference_duration_seconds_count", { model: "esrgan-slim" })).toBeGreaterThan(0);
    expect(sample(text, "atelier_model_loads_total", { model: "esrgan-slim", outcome: "loaded" })).toBe(1);
    expect(sample(text, "atelier_worker_calls_total", { method: "Upscale", code: "OK" })).toBe(1);
    expect(sample(text, "atelier_queue_wait_seconds_count", {})).toBeUndefined(); // unlabelled: no braces
    expect(text).toMatch(/^atelier_queue_wait_seconds_count \d+$/m);
    expect(Number(/^atelier_model_memory_bytes (\d+)/m.exec(text)?.[1])).toBeGreaterThan(0);
  });

  it("carries the trace into the worker for tRPC callers too", async () => {
    const { key } = await atelier.services.keys.create({ name: "trpc-trace", hourlyLimit: null });
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const response = await fetch(`${atelier.url}/trpc/tools.upscale`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      body: JSON.stringify({ imageUrl: dataUrl(await gradientPng(8, 8)), scale: 2, model: "lanczos" }),
    });
    expect(response.status).toBe(200);
    const line = logLines.find((entry) => entry.msg === "request" && entry.traceId === traceId);
    expect(line).toMatchObject({ operation: "tools.upscale", status: 200, model: "lanczos" });
    const call = logLines.find((entry) => entry.method === "Upscale" && typeof entry.traceparent === "string" && (entry.traceparent as string).includes(traceId));
    expect(call?.traceparent).toBe(`00-${traceId}-${line!.spanId as string}-01`);
  });

  it("starts a new trace when the caller sends none or an invalid one, and tRPC calls count under the same operation", async () => {
    const response = await fetch(`${atelier.url}/trpc/models.list`, { headers: { traceparent: `00-${"0".repeat(32)}-${PARENT_SPAN}-01` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("traceresponse")).not.toContain("0".repeat(32));
    expect(sample(await scrape(), "atelier_http_requests_total", { operation: "models.list", transport: "trpc", status: "200" })).toBe(1);
  });
});
