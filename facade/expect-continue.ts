/**
 * `Expect: 100-continue`, answered only once the body is wanted. Node answers it as soon as the
 * headers arrive, so a client with a wrong key, a spent quota or a body over the limit would start
 * uploading before it heard the refusal. Under the paths whose bodies the body reader reads
 * (facade/json-body.ts), it sends `100 Continue` as it starts reading, and a refusal before that
 * goes out in its place: the client then never sends the body (RFC 9110, section 10.1.1). Every other
 * path gets `100 Continue` at once, as from Node.
 */
import type http from "node:http";

/** Requests whose `100 Continue` is still to be sent. */
const owed = new WeakSet<http.IncomingMessage>();

/** The server's `checkContinue` listener: `app` handles the request, with `100 Continue` held back under `prefixes`. */
export function continueWhenBodyIsRead(app: http.RequestListener, prefixes: readonly string[]): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? "").split("?")[0]!;
    if (prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) owed.add(req);
    else res.writeContinue();
    app(req, res);
  };
}

/** Sends the `100 Continue` a request is owed, if any: the body reader calls it as it starts reading. */
export function sendOwedContinue(req: http.IncomingMessage, res: http.ServerResponse): void {
  if (owed.delete(req)) res.writeContinue();
}
