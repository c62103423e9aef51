/**
 * One webhook POST under the image fetcher's outbound rule (server/image-source/outbound-target.ts):
 * the same host checks before any lookup, every resolved address checked (private, loopback and
 * link-local refused unless ATELIER_ALLOWED_PRIVATE_HOSTS opens them on the URL's port) and the socket
 * given exactly the checked addresses; redirects are not followed; a fresh connection each time so
 * no pooled socket skips the check.
 *
 * An attempt has one deadline for everything (connect, sending, the receiver's status line and
 * headers), and the receiver's body is never read: the status is all a delivery needs, so a receiver
 * cannot hold an attempt by answering slowly.
 */
import http from "node:http";
import https from "node:https";
import type { AddressPolicy } from "../../server/image-source/address-policy.js";
import { checkedLookup, hostOf, portOf, refusalBeforeLookup, type TargetRefusal } from "../../server/image-source/outbound-target.js";
import { piecesByteLength, writePieces, type JsonPiece } from "../json-pieces.js";

/** Why a delivery attempt did not get a 2xx; `refused` means the policy forbids the target. */
export class DeliveryRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DeliveryRefused";
  }
}

function deliveryRefused(refusal: TargetRefusal, port: number): DeliveryRefused {
  switch (refusal.reason) {
    case "invalid-host":
      return new DeliveryRefused(`${JSON.stringify(refusal.host)} is not a valid host name or IP address.`);
    case "special-use-name":
      return new DeliveryRefused(`${refusal.host} is a local or special-use host name (localhost, .local, .internal, ...) webhooks may not reach.`);
    case "private-address":
      return new DeliveryRefused(
        refusal.hostname === undefined
          ? `${refusal.address} is a private address webhooks may not reach on port ${port}.`
          : `${refusal.hostname} resolves to ${refusal.address}, a private address webhooks may not reach on port ${port}.`,
      );
  }
}

/** Refuses a target the outbound rule refuses before any lookup (bad host, special-use name, IP literal outside the policy). */
export function assertTargetAllowed(url: URL, policy: AddressPolicy): void {
  const refusal = refusalBeforeLookup(url, policy);
  if (refusal !== undefined) throw deliveryRefused(refusal, portOf(url));
}

/** Limits of one attempt. */
export interface AttemptLimits {
  /** Deadline for the whole attempt, from connecting to the receiver's headers, in ms. */
  timeoutMs: number;
  /** Cuts the attempt off at once (the service is shutting down). */
  signal: AbortSignal;
}

/**
 * POSTs the body the pieces make (json-pieces.ts), an image's base64 a slice at a time; resolves
 * with the status code as soon as the headers arrive, rejects on network errors, refusals, the
 * deadline and the signal.
 */
export function postWebhook(url: URL, headers: Record<string, string>, body: readonly JsonPiece[], policy: AddressPolicy, limits: AttemptLimits): Promise<number> {
  assertTargetAllowed(url, policy);
  const port = portOf(url);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = client.request({
      protocol: url.protocol,
      hostname: hostOf(url),
      port: url.port === "" ? undefined : port,
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "content-length": String(piecesByteLength(body)), "user-agent": "Atelier-Webhooks/1" },
      agent: false,
      lookup: checkedLookup(policy, port, port, (refusal) => deliveryRefused(refusal, port)),
    });
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      limits.signal.removeEventListener("abort", onAbort);
      // The body is never read, and the connection is never reused.
      outgoing.destroy();
      outcome();
    };
    const deadline = setTimeout(() => settle(() => reject(new Error(`no answer within ${limits.timeoutMs} ms`))), limits.timeoutMs);
    const onAbort = (): void => settle(() => reject(new Error("this server shut down before the receiver answered; the delivery is retried")));
    if (limits.signal.aborted) return onAbort();
    limits.signal.addEventListener("abort", onAbort, { once: true });
    outgoing.on("error", (error) => settle(() => reject(error)));
    outgoing.on("response", (response) => settle(() => resolve(response.statusCode ?? 0)));
    void writePieces(outgoing, body).then(
      (whole) => whole && outgoing.end(),
      (error: unknown) => settle(() => reject(error as Error)),
    );
  });
}
