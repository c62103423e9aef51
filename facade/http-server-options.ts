/**
 * Socket time limits for the HTTP facade, so a slow or idle client cannot hold a connection (and
 * its memory) open: Node's defaults let a request body trickle in for 300 s and only check every
 * 30 s. The limits cover receiving the request; the work after it is bounded by the worker deadline.
 */
import type http from "node:http";
import type { AtelierConfig } from "../core/config.js";

export function httpServerOptions(config: Pick<AtelierConfig, "http">): http.ServerOptions {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = config.http;
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    // How often the two request limits are enforced; a tenth of the shorter one, 250 ms to 5 s.
    connectionsCheckingInterval: Math.min(5_000, Math.max(250, Math.floor(Math.min(headersTimeoutMs, requestTimeoutMs) / 10))),
  };
}
