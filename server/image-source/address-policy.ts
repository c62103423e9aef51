/**
 * Which network addresses the image fetcher may contact.
 *
 * A client-supplied URL must never make this server reach into its own network (metadata services,
 * admin ports, databases). Only globally routable unicast addresses are public; every IPv6 form
 * that carries an IPv4 address is judged by that IPv4 address, because that is where the packets
 * end up. Operators (and tests) can still open chosen private sources through an allow-list.
 */
import ipaddr from "ipaddr.js";
import { isSpecialUseName } from "./special-use-names.js";

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type IPAddress = IPv4 | IPv6;

/** What the policy concluded about one address, for messages and logs. */
export interface AddressClassification {
  /** The address as given, normalised (IPv4-mapped IPv6 is shown as plain IPv4). */
  address: string;
  /** True only for globally routable unicast addresses. */
  isPublic: boolean;
  /**
   * The ipaddr.js range that decided the verdict (`unicast`, `loopback`, `private`, ...). For an
   * IPv6 address that embeds IPv4, the range of the first non-public embedded IPv4 address.
   */
  range: string;
  /** The IPv4 addresses found inside an IPv6 address (NAT64, 6to4, Teredo, ...); empty otherwise. */
  embeddedIPv4: string[];
}

/**
 * Classifies one IP address. A string that is not an IP address is never public (fail closed).
 * Accepts every form ipaddr.js parses, including `127.1`, `0x7f.0.0.1` and zone ids (`fe80::1%eth0`).
 */
export function classifyAddress(address: string): AddressClassification {
  const parsed = parseAddress(address);
  if (parsed === undefined) {
    return { address, isPublic: false, range: "invalid", embeddedIPv4: [] };
  }
  return classifyParsed(parsed);
}

/** True when `address` is a globally routable unicast address. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).isPublic;
}

/**
 * The address policy: public addresses are allowed, everything else only through the allow-list.
 * Local and special-use names (`localhost`, `*.local`, ...) are refused before any lookup unless an
 * entry names them.
 *
 * Allow-list entries (from `config.fetch.allowedPrivateHosts`) are one of, each with an optional
 * `:port`:
 * - a hostname (`localhost`, `images.internal:8080`): allows that exact host name, compared
 *   lower-case, whatever it resolves to;
 * - an IP address (`127.0.0.1`, `::1`, `[::1]:8080`): allows that one address;
 * - a CIDR range (`10.0.0.0/8`, `fd00::/8`, `10.0.0.0/8:9000`): allows every address inside it.
 *
 * An entry opens only its port. Without one, it opens the port of the URL the client gave (its
 * explicit port, else 80 for http and 443 for https), so a redirect from an allow-listed source
 * cannot move on to another service of the same private host.
 */
export class AddressPolicy {
  private readonly entries: readonly AllowListEntry[];

  /** @throws Error naming the first entry that is neither a hostname, an IP address nor a CIDR. */
  constructor(allowedPrivateHosts: readonly string[] = []) {
    this.entries = allowedPrivateHosts.map(parseAllowListEntry);
  }

  /**
   * True when `hostname`, reached on `port`, is allow-listed by name, so any address it resolves to
   * may be used. `sourcePort` is the port of the client's URL (see the class comment).
   */
  allowsHostname(hostname: string, port?: number, sourcePort: number | undefined = port): boolean {
    const name = hostname.toLowerCase();
    return this.entries.some((entry) => entry.kind === "hostname" && entry.hostname === name && opensPort(entry, port, sourcePort));
  }

  /**
   * True when the name `hostname` may be handed to the resolver for `port`: any name but a local or
   * special-use one (special-use-names.ts), which only an allow-list entry naming it opens.
   */
  allowsName(hostname: string, port?: number, sourcePort: number | undefined = port): boolean {
    return !isSpecialUseName(hostname) || this.allowsHostname(hostname, port, sourcePort);
  }

  /**
   * True when `address` may be contacted on `port`: it is public (any port), it lies in an
   * allow-listed range that opens that port, or it was obtained by resolving `hostname` and that
   * host name is allow-listed for that port. Without `port`, ports are not compared.
   */
  allowsAddress(address: string, hostname?: string, port?: number, sourcePort: number | undefined = port): boolean {
    if (hostname !== undefined && this.allowsHostname(hostname, port, sourcePort)) return true;
    const parsed = parseAddress(address);
    if (parsed === undefined) return false;
    if (classifyParsed(parsed).isPublic) return true;
    return this.entries.some(
      (entry) =>
        entry.kind === "range" &&
        opensPort(entry, port, sourcePort) &&
        entry.range[0].kind() === parsed.kind() &&
        parsed.match(entry.range[0], entry.range[1]),
    );
  }
}

type AllowListEntry =
  | { kind: "hostname"; hostname: string; port: number | undefined }
  | { kind: "range"; range: [IPAddress, number]; port: number | undefined };

/** The entry's own port, else the client URL's port; `port` undefined compares nothing. */
function opensPort(entry: AllowListEntry, port: number | undefined, sourcePort: number | undefined): boolean {
  return port === undefined || (entry.port ?? sourcePort) === port;
}

/** `entry` split into its host part and optional trailing `:port` (a bare IPv6 address has none). */
function splitPort(entry: string): { host: string; port: number | undefined } {
  const match = /^(\[[^\]]+\]|[^:]+|.*\/\d+):(\d{1,5})$/.exec(entry);
  if (!match) return { host: entry, port: undefined };
  const port = Number(match[2]);
  if (port < 1 || port > 65535) throw new Error(`Invalid port in allowed private host ${JSON.stringify(entry)}: expected 1 to 65535.`);
  return { host: match[1]!, port };
}

/** One DNS label: letters, digits, `-` and `_`, at most 63 characters, no hyphen at either end. */
const LABEL = "[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?";
/** A DNS name: dot-separated labels, at most 253 characters, optional trailing dot. */
export const HOSTNAME_PATTERN = new RegExp(`^(?=.{1,253}\\.?$)${LABEL}(?:\\.${LABEL})*\\.?$`);

function parseAllowListEntry(raw: string): AllowListEntry {
  const { host: entry, port } = splitPort(raw.trim().toLowerCase());
  const unbracketed = entry.startsWith("[") && entry.endsWith("]") ? entry.slice(1, -1) : entry;

  if (entry.includes("/")) {
    // Only canonical notations: `10.1/8` parses, but nobody writing it means what it parses to.
    if (ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) || ipaddr.IPv6.isValidCIDR(entry)) {
      return { kind: "range", range: canonicalRange(ipaddr.parseCIDR(entry)), port };
    }
  } else if (ipaddr.IPv4.isValidFourPartDecimal(unbracketed) || ipaddr.IPv6.isValid(unbracketed)) {
    const address = ipaddr.parse(unbracketed);
    return { kind: "range", range: canonicalRange([address, address.kind() === "ipv4" ? 32 : 128]), port };
  } else if (HOSTNAME_PATTERN.test(entry) && !/^[0-9.]+$/.test(entry) && !/^0x/.test(entry)) {
    return { kind: "hostname", hostname: entry, port };
  }
  throw new Error(
    `Invalid allowed private host ${JSON.stringify(raw)}: expected a host name (images.internal), ` +
      `an IP address (10.0.0.5, ::1) or a CIDR range (10.0.0.0/8, fd00::/8), each optionally with :port (images.internal:8080, [::1]:8080).`,
  );
}

/**
 * Addresses are compared after `ipaddr.process`, which turns IPv4-mapped IPv6 into IPv4, so an
 * IPv4-mapped range (`::ffff:10.0.0.0/104`) is stored as the IPv4 range it denotes.
 */
function canonicalRange([network, prefix]: [IPAddress, number]): [IPAddress, number] {
  if (network.kind() === "ipv6" && prefix >= 96 && (network as IPv6).isIPv4MappedAddress()) {
    return [(network as IPv6).toIPv4Address(), prefix - 96];
  }
  return [network, prefix];
}

function parseAddress(address: string): IPAddress | undefined {
  const unbracketed = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  try {
    return ipaddr.process(unbracketed);
  } catch {
    return undefined;
  }
}

function classifyParsed(address: IPAddress): AddressClassification {
  const shown = address.toString();
  if (address.kind() === "ipv4") {
    const range = (address as IPv4).range();
    return { address: shown, isPublic: range === "unicast", range, embeddedIPv4: [] };
  }
  const ipv6 = address as IPv6;
  const embedded = embeddedIPv4Addresses(ipv6);
  if (embedded.length > 0) {
    const refused = embedded.map((ipv4) => ipv4.range()).find((range) => range !== "unicast");
    return {
      address: shown,
      isPublic: refused === undefined,
      range: refused ?? "unicast",
      embeddedIPv4: embedded.map((ipv4) => ipv4.toString()),
    };
  }
  const range = ipv6.range();
  // ipaddr.js calls everything outside its special ranges "unicast", including never-allocated
  // space such as `::1:2:3:4`; only 2000::/3 is handed out as global unicast.
  const isGlobalUnicast = range === "unicast" && ipv6.match(GLOBAL_UNICAST_V6);
  return {
    address: shown,
    isPublic: isGlobalUnicast,
    range: range === "unicast" && !isGlobalUnicast ? "unallocated" : range,
    embeddedIPv4: [],
  };
}

const cidr = (text: string): [IPAddress, number] => ipaddr.parseCIDR(text);

const GLOBAL_UNICAST_V6 = cidr("2000::/3");
const IPV4_MAPPED = cidr("::ffff:0:0/96");
const IPV4_TRANSLATED = cidr("::ffff:0:0:0/96"); // RFC 6145 / 2765
const IPV4_COMPATIBLE = cidr("::/96"); // deprecated RFC 4291 form `::a.b.c.d`
const NAT64_WELL_KNOWN = cidr("64:ff9b::/96"); // RFC 6052
const SIX_TO_FOUR = cidr("2002::/16"); // RFC 3056: 2002:AABB:CCDD::/48 wraps A.B.C.D
const TEREDO = cidr("2001::/32"); // RFC 4380

/** The IPv4 addresses that traffic to this IPv6 address is delivered to or through. */
function embeddedIPv4Addresses(address: IPv6): IPv4[] {
  const p = address.parts;
  const fromWords = (high: number, low: number): IPv4 =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const lowWords = (): IPv4 => fromWords(p[6] ?? 0, p[7] ?? 0);

  if (address.match(IPV4_MAPPED) || address.match(IPV4_TRANSLATED) || address.match(NAT64_WELL_KNOWN)) {
    return [lowWords()];
  }
  // `::` and `::1` sit inside ::/96 but are judged as themselves (unspecified, loopback).
  if (address.match(IPV4_COMPATIBLE)) {
    const range = address.range();
    return range === "unspecified" || range === "loopback" ? [] : [lowWords()];
  }
  if (address.match(SIX_TO_FOUR)) return [fromWords(p[1] ?? 0, p[2] ?? 0)];
  if (address.match(TEREDO)) {
    // Teredo carries the relay server in words 2-3 and the client, bit-inverted, in words 6-7.
    const server = fromWords(p[2] ?? 0, p[3] ?? 0);
    const client = fromWords(~(p[6] ?? 0) & 0xffff, ~(p[7] ?? 0) & 0xffff);
    return [client, server];
  }
  return [];
}
