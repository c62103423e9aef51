/**
 * A small HTTP proxy in front of a real Atelier that misbehaves on request, for the clients'
 * retry tests: the next requests can have their connection destroyed, be answered with a chosen
 * status (503, 429 with `Retry-After`), or be delayed; everything else is forwarded unchanged.
 * It records what arrived, so tests can check the idempotency key a client reused. Tests in other
 * processes (the Python suite) drive it over HTTP: `POST /__proxy/faults` with a JSON array of
 * faults, `GET /__proxy/seen`, `POST /__proxy/reset`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Fault =
  | { kind: "drop" }
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: "delay"; ms: number }
  /** Forwards at once, then cuts the client's connection after `ms`, leaving the server's work running. */
  | { kind: "cut-after"; ms: number }
  /** Forwards with `Prefer: respond-async`, so the real server answers 202 and a job. */
  | { kind: "prefer-async" };

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  at: number;
}

export interface FaultProxy {
  url: string;
  /** Faults for the next requests, in order; each is used once. */
  queue(...faults: Fault[]): void;
  seen: SeenRequest[];
  reset(): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const faults: Fault[] = [];
  const seen: SeenRequest[] = [];
  const upstream = new URL(target);
  // Its own agent, so closing the proxy also closes its connections to the service.
  const agent = new http.Agent({ keepAlive: false });
  const control = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.url === "/__proxy/faults") faults.push(...(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Fault[]));
      if (req.url === "/__proxy/reset") {
        faults.length = 0;
        seen.length = 0;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(req.url === "/__proxy/seen" ? seen : { ok: true }));
    });
  };
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith("/__proxy/")) return control(req, res);
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, at: Date.now() });
    const fault = faults.shift();
    if (fault?.kind === "drop") {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === "status") {
      req.resume();
      res.writeHead(fault.status, { "content-type": "application/json", "x-request-id": "proxy-fault", ...fault.headers });
      res.end(JSON.stringify(fault.body ?? { code: "OVERLOADED", message: "Injected by the fault proxy.", requestId: "proxy-fault" }));
      return;
    }
    const forward = () => {
      const outbound = http.request(
        {
          agent,
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host, ...(fault?.kind === "prefer-async" ? { prefer: "respond-async" } : {}) },
        },
        (response) => {
          if (res.destroyed) return response.resume();
          res.writeHead(response.statusCode ?? 502, response.headers);
          response.pipe(res);
        },
      );
      outbound.on("error", () => res.destroy());
      if (fault?.kind === "cut-after") setTimeout(() => req.socket.destroy(), fault.ms);
      // A cut connection leaves the server's work running, as a network failure would.
      else res.on("close", () => outbound.destroy());
      req.pipe(outbound);
    };
    if (fault?.kind === "delay") setTimeout(forward, fault.ms);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    queue: (...more) => faults.push(...more),
    seen,
    reset: () => {
      faults.length = 0;
      seen.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
