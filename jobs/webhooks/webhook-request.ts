/**
 * One webhook POST under the image fetcher's address policy: every address the target's name
 * resolves to is checked (private, loopback and link-local refused unless allow-listed by
 * ATELIER_ALLOWED_PRIVATE_HOSTS) and the socket gets exactly the checked addresses; redirects are not
 * followed; a fresh connection each time so no pooled socket skips the check.
 */
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net, { type LookupFunction } from "node:net";
import type { AddressPolicy } from "../../server/image-source/address-policy.js";
import { piecesByteLength, writePieces, type JsonPiece } from "../json-pieces.js";

/** Why a delivery attempt did not get a 2xx; `refused` means the policy forbids the target. */
export class DeliveryRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DeliveryRefused";
  }
}

function checkedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: options.family, hints: options.hints }, (error, addresses) => {
      if (error) return callback(error, "");
      const refused = addresses.find((entry) => !policy.allowsAddress(entry.address, hostname));
      if (refused) return callback(new DeliveryRefused(`${hostname} resolves to ${refused.address}, a private address webhooks may not reach.`), "");
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "");
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/** Refuses a target whose host is an IP literal outside the policy, before any connection. */
export function assertTargetAllowed(url: URL, policy: AddressPolicy): void {
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (net.isIP(hostname) !== 0 && !policy.allowsAddress(hostname)) {
    throw new DeliveryRefused(`${hostname} is a private address webhooks may not reach.`);
  }
}

/**
 * POSTs the body the pieces make (json-pieces.ts), an image's base64 a slice at a time; resolves
 * with the status code, rejects on network errors, refusals and timeouts.
 */
export function postWebhook(url: URL, headers: Record<string, string>, body: readonly JsonPiece[], policy: AddressPolicy, timeoutMs: number): Promise<number> {
  assertTargetAllowed(url, policy);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = client.request({
      protocol: url.protocol,
      hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "content-length": String(piecesByteLength(body)), "user-agent": "Atelier-Webhooks/1" },
      agent: false,
      lookup: checkedLookup(policy),
      timeout: timeoutMs,
    });
    outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on("error", reject);
    outgoing.on("response", (response) => {
      // The body is not needed; reading it lets the socket close cleanly.
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
      response.on("error", () => resolve(response.statusCode ?? 0));
    });
    void writePieces(outgoing, body).then((whole) => whole && outgoing.end(), reject);
  });
}
