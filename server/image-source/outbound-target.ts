/**
 * The one rule for every outbound request a client chooses the target of: image URLs (and each
 * redirect hop) and webhooks. Before any lookup the host must be a valid DNS name or IP address, a
 * name must not be local or special-use, and an IP literal must be one the {@link AddressPolicy}
 * allows on the port; then every address the name resolves to is checked the same way and the
 * socket gets exactly those addresses. Callers word a refusal for their own field.
 */
import dns from "node:dns";
import net, { type LookupFunction } from "node:net";
import { HOSTNAME_PATTERN, type AddressPolicy } from "./address-policy.js";

/** Why a target may not be contacted. */
export type TargetRefusal =
  /** The host is neither a DNS name the resolver can carry nor an IP address. */
  | { reason: "invalid-host"; host: string }
  /** A local or special-use name (special-use-names.ts) that no allow-list entry names. */
  | { reason: "special-use-name"; host: string }
  /** An address outside the policy on this port; `hostname` is the name that resolved to it. */
  | { reason: "private-address"; address: string; hostname?: string };

/** The URL's host as the resolver and the socket want it: IPv6 without brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** The port a URL connects to: its own, else the scheme's default. */
export function portOf(url: URL): number {
  return url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/**
 * Why `url` is refused before any lookup, or undefined. `sourcePort` is the port of the URL the client
 * gave (a redirect's origin), which allow-list entries without a port open (address-policy.ts).
 */
export function refusalBeforeLookup(url: URL, policy: AddressPolicy, sourcePort = portOf(url)): TargetRefusal | undefined {
  const host = hostOf(url);
  const port = portOf(url);
  // Node connects to IP literals without calling `lookup`, so they are checked here. The URL
  // parser has already turned `2130706433`, `0x7f.1` and friends into dotted IPv4.
  if (net.isIP(host) !== 0) return policy.allowsAddress(host, undefined, port, sourcePort) ? undefined : { reason: "private-address", address: host };
  // The URL parser accepts host names DNS cannot carry (labels over 63 characters, `a..b`, `-x-`).
  if (!HOSTNAME_PATTERN.test(host)) return { reason: "invalid-host", host };
  return policy.allowsName(host, port, sourcePort) ? undefined : { reason: "special-use-name", host };
}

/**
 * A `lookup` for `net.connect` that refuses a name {@link refusalBeforeLookup} refuses without asking
 * the resolver, resolves every address of the others, refuses the connection if any one of them is
 * refused by the policy on `port`, and otherwise gives the socket exactly the addresses it checked.
 * `refused` turns a refusal into the caller's error.
 */
export function checkedLookup(policy: AddressPolicy, port: number, sourcePort: number, refused: (refusal: TargetRefusal) => Error): LookupFunction {
  return (hostname, options, callback) => {
    if (!policy.allowsName(hostname, port, sourcePort)) {
      callback(refused({ reason: "special-use-name", host: hostname }), "");
      return;
    }
    dns.lookup(hostname, { all: true, family: options.family, hints: options.hints }, (error, addresses) => {
      if (error) {
        callback(error, "");
        return;
      }
      const outside = addresses.find((entry) => !policy.allowsAddress(entry.address, hostname, port, sourcePort));
      if (outside !== undefined) {
        callback(refused({ reason: "private-address", address: outside.address, hostname }), "");
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "");
        return;
      }
      // With autoSelectFamily (Node's default) the socket asks for all addresses and races them.
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
