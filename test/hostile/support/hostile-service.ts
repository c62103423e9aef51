/** Shared pieces of the hostile suite: a raw HTTP client, a listener that records connections, memory and time bounds. */
import http from "node:http";
import net from "node:net";

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
}

/** One request with any method, headers and body; resolves with the whole answer. */
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string | number | string[]>, body?: Buffer | string): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port, method, path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString(), ms: performance.now() - started }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** A TCP listener on loopback that must never be contacted: it records every connection. */
export async function forbiddenListener(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The error code of a REST or tRPC error body, or undefined. */
export function errorCodeOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; error?: { data?: { code?: unknown } } } | unknown[];
    const first = (Array.isArray(parsed) ? parsed[0] : parsed) as { code?: unknown; error?: { data?: { code?: unknown } } };
    const code = first?.error?.data?.code ?? first?.code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Server-side states that are not the input's fault and answer 5xx by contract: no model installed
 * for a well-formed request, and an image source that cannot be fetched (502).
 */
export const NOT_A_FAULT = new Set(["MODEL_NOT_INSTALLED", "SOURCE_FETCH_FAILED"]);

/** True for an answer a bad input may get: any 4xx, a 2xx, or a 5xx the contract gives to a server state. */
export function acceptableForBadInput(answer: RawAnswer): boolean {
  if (answer.status < 500) return true;
  return NOT_A_FAULT.has(errorCodeOf(answer.body) ?? "");
}
