/**
 * HTTP/2 receive windows for the image RPCs, on both ends of the router–worker link.
 *
 * HTTP/2 lets a peer send only as many bytes as the receiver's window allows, and Node's default is
 * 64 KiB per stream and per connection: a 1.5 MB request image then crosses in about 24 round trips,
 * each waiting for a WINDOW_UPDATE. With the worker in the router's process, every round trip is a
 * turn of the one event loop: a 1 MP style transfer spent 27 ms sending its PNG to the worker and 15 ms
 * getting the answer back; with these windows 10 and 5 ms (and more saved at 12 MP). Windows of 16 MiB
 * cover a 1 MP image's bytes in one go and a 12 MP one in a few round trips, and cost nothing until used:
 * grpc-js reads whatever arrives anyway (no back-pressure on receive), so they do not change how much
 * memory a call can take; the message limits (ATELIER_WORKER_MAX_MESSAGE_BYTES) still bound that.
 */
import type http2 from "node:http2";
import type { Server } from "@grpc/grpc-js";
import type { Logger } from "../core/logger.js";

export const GRPC_RECEIVE_WINDOW_BYTES = 16 * 1024 * 1024;

/** grpc-js's own option: the client reads it; the server ignores it in 1.14 (grpc/grpc-node#3058 adds it). */
export const GRPC_FLOW_CONTROL_OPTION = { "grpc-node.flow_control_window": GRPC_RECEIVE_WINDOW_BYTES } as const;

/**
 * Gives every connection a bound `server` accepts from now on the receive windows above: per stream
 * (the SETTINGS it announces) and for the connection. grpc-js 1.14 has no option for the server's
 * windows, so this reaches its HTTP/2 servers (a private field; found missing, it logs and leaves the
 * defaults: calls work either way, only slower). Call it after `bindAsync` has resolved.
 */
export function widenServerReceiveWindows(server: Server, logger: Logger, bytes = GRPC_RECEIVE_WINDOW_BYTES): void {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) {
    logger.debug("grpc-js keeps its HTTP/2 servers elsewhere: worker receive windows left at 64 KiB");
    return;
  }
  for (const http2Server of servers.keys() as IterableIterator<http2.Http2Server>) {
    http2Server.on("session", (session: http2.ServerHttp2Session) => {
      try {
        session.settings({ initialWindowSize: bytes });
        session.setLocalWindowSize(bytes);
      } catch (error) {
        // A session closed as it opened: nothing to widen.
        logger.debug({ err: error }, "could not widen a worker connection's receive window");
      }
    });
  }
}
