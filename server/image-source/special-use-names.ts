/**
 * Host names that never lead to a public host, judged before any lookup: handing them to the system
 * resolver would only ask /etc/hosts, the search domains, mDNS or a corporate DNS server about this
 * server's own network, or leak the name to the root servers.
 *
 * The list is closed and each entry has its authority:
 * - names of one label (`localhost`, `ip6-localhost`, `ip6-loopback`, `metadata`, `intranet`): the
 *   resolver completes them from /etc/hosts and the search domains, both local by definition, and
 *   no public host has one (ICANN forbids dotless domains, SAC053);
 * - `localhost` (RFC 6761 6.3): loopback by definition, every name under it too;
 * - `local` (RFC 6762): multicast DNS on the local link;
 * - `test` and `invalid` (RFC 6761 6.2, 6.4): never delegated, answered locally if at all;
 * - `onion` (RFC 7686) and `alt` (RFC 9476): not DNS at all, a lookup only leaks the name;
 * - `arpa` (RFC 3172): infrastructure, never a web host; covers `home.arpa` (RFC 8375, home
 *   networks), the reverse zones and `ipv4only.arpa` (RFC 7050, a special-purpose address);
 * - `internal`: reserved by ICANN for private networks;
 * - `corp`, `home`, `mail`: ICANN will never delegate them, as so many private networks use them.
 *
 * `example` (RFC 6761 6.5) is left out on purpose: its names are documentation, and RFC 6761 asks
 * applications not to treat them specially.
 */

const LOCAL_TOP_LEVEL_DOMAINS = new Set(["localhost", "local", "test", "invalid", "onion", "alt", "arpa", "internal", "corp", "home", "mail"]);

/** True when `hostname` (a DNS name, not an IP address; any case, trailing dot or not) is local or special-use by the list above. */
export function isSpecialUseName(hostname: string): boolean {
  const labels = hostname.toLowerCase().replace(/\.$/, "").split(".");
  return labels.length === 1 || LOCAL_TOP_LEVEL_DOMAINS.has(labels.at(-1)!);
}
