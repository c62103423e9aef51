/**
 * The HTTP/2 receive windows of the router–worker link (transport/grpc-flow-control.ts): the worker's gRPC
 * server announces them to whoever connects, and the router's clients announce theirs to the worker,
 * so neither side's image waits for a WINDOW_UPDATE every 64 KiB. Seen from the other end of a real
 * connection on loopback: what the peer's SETTINGS say and how large its connection window is.
 */
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { GRPC_RECEIVE_WINDOW_BYTES } from "../../transport/grpc-flow-control.js";
import { createLogger } from "../../core/logger.js";
import { ListModelsRequest } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { createWorkerClients } from "../../server/workers/worker-clients.js";
import { startWorkerServer, type RunningWorker } from "../../workers/worker-server.js";
import { fileTempDir } from "../support/temp-dir.js";

const NODE_DEFAULT_WINDOW = 65_535;
const config = loadConfig({ LOG_LEVEL: "silent", ATELIER_DATA_DIR: fileTempDir("test"), ATELIER_MODELS_DIR: fileTempDir("no-models") });

/**
 * Listens for `session`'s errors: node reports a peer's GOAWAY with an error code as one (grpc-js's
 * server sends CANCEL to the sessions still open when it is shut down without grace), and unheard it
 * would be an uncaught exception in the test process, not this test's concern: only the windows are.
 */
function ignoringPeerErrors<Session extends http2.Http2Session>(session: Session): Session {
  session.on("error", () => {});
  return session;
}

/** What the peer has announced to `session`, once it has announced the widened windows (or after 2 s). */
function windowsOf(session: http2.Http2Session): Promise<{ initialWindowSize: number | undefined; connectionWindow: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const check = () => {
      const settled = !session.destroyed && session.remoteSettings.initialWindowSize === GRPC_RECEIVE_WINDOW_BYTES && session.state.remoteWindowSize! > NODE_DEFAULT_WINDOW;
      if (settled || Date.now() - started > 2_000) resolve({ initialWindowSize: session.remoteSettings.initialWindowSize, connectionWindow: session.state.remoteWindowSize! });
      else setTimeout(check, 10);
    };
    check();
  });
}

describe("the worker's gRPC server", () => {
  let worker: RunningWorker;
  beforeAll(async () => {
    worker = await startWorkerServer(config, createLogger("silent"), { host: "127.0.0.1", port: 0 });
  });
  afterAll(() => worker.shutdown(0));

  it("announces 16 MiB receive windows per stream and for the connection to a client that connects", async () => {
    const session = ignoringPeerErrors(http2.connect(`http://127.0.0.1:${worker.port}`));
    try {
      const windows = await windowsOf(session);
      expect(windows.initialWindowSize).toBe(GRPC_RECEIVE_WINDOW_BYTES);
      expect(windows.connectionWindow).toBeGreaterThanOrEqual(GRPC_RECEIVE_WINDOW_BYTES - NODE_DEFAULT_WINDOW);
    } finally {
      if (!session.closed) await new Promise<void>((resolve) => session.close(() => resolve()));
    }
  });
});

describe("the router's worker clients", () => {
  let server: http2.Http2Server;
  let port: number;
  const sessions: http2.ServerHttp2Session[] = [];
  beforeAll(async () => {
    server = http2.createServer();
    server.on("session", (session) => sessions.push(ignoringPeerErrors(session)));
    // No gRPC service here: each call is answered UNIMPLEMENTED; the connection it opened is what the test reads.
    server.on("stream", (stream) => stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "12" }, { endStream: true }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const session of sessions) session.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it("announce 16 MiB receive windows to the worker they call", async () => {
    const address = `127.0.0.1:${port}`;
    const clients = createWorkerClients(config, { upscale: address, generation: address, style: address, background: address, prompt: address, catalog: address });
    try {
      const call = clients.listModels(ListModelsRequest.fromPartial({}), { deadlineMs: 3_000 }).catch(() => undefined);
      while (sessions.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const windows = await windowsOf(sessions[0]!);
      expect(windows.initialWindowSize).toBe(GRPC_RECEIVE_WINDOW_BYTES);
      expect(windows.connectionWindow).toBeGreaterThanOrEqual(GRPC_RECEIVE_WINDOW_BYTES - NODE_DEFAULT_WINDOW);
      await call;
    } finally {
      clients.close();
    }
  });
});
