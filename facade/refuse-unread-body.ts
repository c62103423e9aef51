/**
 * Refusals sent before a request's body is read, or while it is being read (a wrong key, a spent
 * quota, a body over the limit or not JSON, too many large bodies at once): the answer goes out at
 * once and the connection closes only once the client has sent the rest of its body, which is
 * thrown away unparsed.
 *
 * Closing as soon as the answer is out would reset the connection under a client still sending,
 * and a reset discards what the client has not read yet: clients that write their whole body
 * before reading an answer (Python's httpx and requests, among others) then report a broken pipe
 * instead of the refusal. Discarding holds no memory, and it is bounded like every upload: the
 * server's request timeout (ATELIER_HTTP_REQUEST_TIMEOUT_MS) closes a connection whose body does
 * not end. Clients that read while they send (curl, browsers) stop at the answer and close first.
 */
import type { Request, Response } from "express";

/** Calls `refuse`, which writes the whole answer, with the connection kept open until the body has been received (see above). */
export function refuseUnreadBody(req: Request, res: Response, refuse: () => void): void {
  res.setHeader("Connection", "close");
  if (!req.complete) {
    // Every byte written now; only the end, after which Node closes the connection, waits.
    const end = res.end.bind(res) as () => Response;
    let ended = false;
    const endOnce = () => {
      if (ended) return;
      ended = true;
      end();
    };
    res.end = ((chunk?: unknown, encoding?: unknown) => {
      if (chunk !== undefined && typeof chunk !== "function") res.write(chunk, encoding as BufferEncoding);
      if (req.complete) endOnce();
      else {
        req.once("end", endOnce);
        req.once("close", endOnce);
      }
      return res;
    }) as Response["end"];
    // Nobody else reads the body now: let it flow, unused, so "end" comes.
    req.resume();
  }
  refuse();
}
