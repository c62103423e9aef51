/**
 * HEAD is answered as GET everywhere (RFC 9110 9.3.2): the request goes through the GET routes, and
 * Node's response, which learnt at creation that the request was HEAD, sends the status and headers
 * (Content-Length included) without the body. One rule for every route, REST, tRPC and console.
 */
import type { NextFunction, Request, Response } from "express";

export function headAsGet(req: Request, _res: Response, next: NextFunction): void {
  if (req.method === "HEAD") req.method = "GET";
  next();
}
