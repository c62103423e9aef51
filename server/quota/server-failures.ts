/**
 * Requests the server failed (5xx) on metered keys, counted by error code and by whether the quota
 * gave the request back: a key whose failures keep being charged (refunded="false") is either hit
 * by a real outage or probing for a failure that buys free work. In prom-client's default registry,
 * which the service's /metrics exports.
 */
import { Counter } from "prom-client";

const serverFailures = new Counter({
  name: "atelier_server_failures_total",
  help: "Metered requests that failed with a 5xx, by error code and whether the quota refunded them (ATELIER_QUOTA_MAX_REFUNDS caps refunds per key per window).",
  labelNames: ["code", "refunded"] as const,
});

export function recordServerFailure(code: string, refunded: boolean): void {
  serverFailures.inc({ code, refunded: String(refunded) });
}
