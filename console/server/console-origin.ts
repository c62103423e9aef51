/**
 * The console's own origin, and which `Host` it answers. The origin check on form posts and the
 * links the console writes (invites) both take the origin from somewhere: from the request, a page
 * whose DNS name an attacker points at this server (DNS rebinding) passes the origin check under
 * its own name, and a request with a forged `Host` gets an invite link to another site. So:
 * - with ATELIER_PUBLIC_URL, that is the origin, and a console request for any other host is
 *   refused;
 * - without it, the request's own origin is used (protocol as the trusted proxies say), and a
 *   console listening on a loopback address answers loopback names only: nothing else reaches that
 *   address, so another name is a rebinding page, or a proxy that should name the public URL.
 * Only console paths are checked. The API authenticates with a key a page cannot read and writes
 * no absolute links, and the health endpoints are probed by orchestrators at pod addresses; other
 * services reach both by internal names, which the check would refuse.
 */
import { BlockList, isIP } from "node:net";
import type { NextFunction, Request, RequestHandler, Response } from "express";

/** The console's origin for `req`: `publicOrigin` (ATELIER_PUBLIC_URL) when set, else the request's own. */
export function consoleOrigin(req: Request, publicOrigin: string | undefined): string {
  return publicOrigin ?? `${req.protocol}://${req.host}`;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");
LOOPBACK.addSubnet("::ffff:127.0.0.0", 104, "ipv6");

/** True for names that only ever mean this machine: `localhost` (and `*.localhost`), 127.0.0.0/8, `::1`. */
export function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  const family = isIP(name);
  return family !== 0 && LOOPBACK.check(name, family === 4 ? "ipv4" : "ipv6");
}

/** A `Host` value as RFC 9110 allows it: a name or IPv4 address, or a bracketed IPv6 address, and an optional port. */
const HOST_VALUE = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** True when `host` (a `Host` value, port included) names `publicOrigin`'s host, its default port implied. */
function isPublicHost(host: string | undefined, publicOrigin: string): boolean {
  if (host === undefined || !HOST_VALUE.test(host)) return false;
  const expected = new URL(publicOrigin);
  return URL.parse(`${expected.protocol}//${host}`)?.host === expected.host;
}

function refuse(res: Response, message: string): void {
  res.status(421).type("text/plain").send(message);
}

/**
 * Refuses (421 Misdirected Request) console requests for a host the console does not answer:
 * any but `publicOrigin`'s when that is set, else any but a loopback name when `listenHost` (the
 * HTTP listener's address, HOST) is a loopback address.
 */
export function requireConsoleHost(publicOrigin: string | undefined, listenHost: string): RequestHandler {
  const loopbackOnly = publicOrigin === undefined && isLoopbackName(listenHost);
  return (req: Request, res: Response, next: NextFunction) => {
    if (publicOrigin !== undefined && !isPublicHost(req.host, publicOrigin)) {
      return refuse(res, `Refused: this console answers at ${publicOrigin} (ATELIER_PUBLIC_URL) only. Open it there.`);
    }
    if (loopbackOnly && !isLoopbackName(req.hostname ?? "")) {
      return refuse(
        res,
        "Refused: this console listens on a loopback address and answers only as localhost or 127.0.0.1. If a proxy serves it under another name, set ATELIER_PUBLIC_URL to the address browsers open.",
      );
    }
    next();
  };
}
