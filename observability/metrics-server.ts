/**
 * The Prometheus endpoint on a port of its own (ATELIER_METRICS_PORT), so metrics are never exposed
 * with the public API and need no API key. Served only when that port is set, and on loopback unless
 * ATELIER_METRICS_HOST opens it: nothing here asks who is scraping.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../core/logger.js";
import { metricsRegistry } from "./metrics.js";

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: { host: string; port: number }, logger: Logger): Promise<MetricsServer | undefined> {
  if (options.port === 0) return undefined;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain" }).end("Method not allowed\n");
      return;
    }
    if (path !== "/metrics") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Metrics are at /metrics\n");
      return;
    }
    metricsRegistry.metrics().then(
      (body) => res.writeHead(200, { "Content-Type": metricsRegistry.contentType, "Cache-Control": "no-store" }).end(req.method === "HEAD" ? undefined : body),
      (error: unknown) => {
        logger.error({ err: error }, "collecting metrics failed");
        res.writeHead(500, { "Content-Type": "text/plain" }).end("Collecting metrics failed\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(new Error(`ATELIER_METRICS_PORT: cannot listen on ${options.host}:${options.port} (${error.code ?? error.message}); choose another port, or unset it to serve no metrics.`)),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}/metrics`;
  logger.info({ url }, "metrics listening");
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
