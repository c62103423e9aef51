/**
 * The body reader (facade/json-body.ts) over raw sockets: a body with a declared length is copied
 * into place chunk by chunk as it arrives, so these send bodies in small pieces, with long strings
 * across chunk boundaries, and check what the route receives and what a broken body gets.
 */
import express from "express";
import net from "node:net";
import type { Server } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { jsonBodies } from "../../facade/json-body.js";

const MAX_BODY_BYTES = 2 * 2 ** 20;
let server: Server;
let port: number;

beforeAll(async () => {
  const app = express();
  const failure = (_req: express.Request, res: express.Response, error: AtelierError) => void res.status(error.code === "PAYLOAD_TOO_LARGE" ? 413 : 400).json({ code: error.code });
  app.post("/echo", jsonBodies({ maxBodyBytes: MAX_BODY_BYTES, maxConcurrentLargeBodies: 4 })(failure), (req, res) => void res.json({ body: req.body as unknown }));
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** Sends `head` then `body` in `pieceBytes` pieces (each its own write, a turn apart); resolves with the whole answer, or "" when the server closes without one. */
async function send(body: Buffer, options: { pieceBytes: number; headers?: string; endAfter?: number }): Promise<string> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  const answer: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => answer.push(chunk));
  const closed = new Promise((resolve) => socket.once("close", resolve));
  socket.on("error", () => {});
  socket.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n${options.headers ?? `Content-Length: ${body.length}\r\n`}\r\n`);
  const end = options.endAfter ?? body.length;
  for (let at = 0; at < end; at += options.pieceBytes) {
    socket.write(body.subarray(at, Math.min(at + options.pieceBytes, end)));
    await sleep(0);
  }
  if (options.endAfter !== undefined) socket.end();
  await closed;
  return Buffer.concat(answer).toString();
}

/**
 * Sends `head` and the whole `body` before reading anything, as Python's httpx and requests do, then
 * reads the answer until the server closes; "write failed: …" when the server reset the connection
 * under the upload (the answer is then lost with it).
 */
async function sendWholeThenRead(body: Buffer, headers: string): Promise<string> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.pause();
  socket.on("error", () => {});
  const head = `POST /echo HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;
  const failed = await new Promise<Error | null | undefined>((resolve) => socket.write(Buffer.concat([Buffer.from(head), body]), resolve));
  if (failed) return `write failed: ${failed.message}`;
  const answer: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => answer.push(chunk));
  const closed = new Promise((resolve) => socket.once("close", resolve));
  socket.resume();
  await closed;
  return Buffer.concat(answer).toString();
}

const statusOf = (answer: string) => Number(answer.slice(9, 12));
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as unknown;

describe("the body reader", () => {
  const value = { imageUrl: `data:image/png;base64,${"QUJD".repeat(100_000)}`, text: "é😀 and \"quotes\"", nested: [{ a: 1 }] };
  const text = Buffer.from(JSON.stringify(value));

  it.each([1000, 4096, 65_536, 333_333])("reads a body sent in %i-byte pieces as JSON.parse reads it", async (pieceBytes) => {
    const answer = await send(text, { pieceBytes });
    expect(statusOf(answer)).toBe(200);
    expect(bodyOf(answer)).toEqual({ body: value });
  });

  it("reads a chunked body (no declared length) the same way", async () => {
    const chunked = Buffer.concat([Buffer.from(`${text.length.toString(16)}\r\n`), text, Buffer.from("\r\n0\r\n\r\n")]);
    const answer = await send(chunked, { pieceBytes: 50_000, headers: "Transfer-Encoding: chunked\r\n" });
    expect(bodyOf(answer)).toEqual({ body: value });
  });

  it("answers 400 to malformed JSON and to bytes that are not UTF-8 inside a long string", async () => {
    expect(statusOf(await send(text.subarray(0, text.length - 1), { pieceBytes: 10_000, headers: `Content-Length: ${text.length - 1}\r\n` }))).toBe(400);
    const notUtf8 = Buffer.from(text);
    notUtf8[200_000] = 0xff;
    const answer = await send(notUtf8, { pieceBytes: 10_000 });
    expect(statusOf(answer)).toBe(400);
    expect(bodyOf(answer)).toEqual({ code: "MALFORMED_JSON" });
  });

  it("answers 413 to a body over the limit, declared or not", async () => {
    const large = Buffer.from(JSON.stringify({ imageUrl: "A".repeat(MAX_BODY_BYTES) }));
    expect(statusOf(await send(large, { pieceBytes: 65_536 }))).toBe(413);
    const chunked = Buffer.concat([Buffer.from(`${large.length.toString(16)}\r\n`), large, Buffer.from("\r\n0\r\n\r\n")]);
    expect(statusOf(await send(chunked, { pieceBytes: 65_536, headers: "Transfer-Encoding: chunked\r\n" }))).toBe(413);
  });

  describe("refusing a body it does not read, to a client that sends all of it before reading", () => {
    // Many times what the sockets buffer, so a server that closed at once would reset the upload.
    const huge = Buffer.from(JSON.stringify({ imageUrl: "A".repeat(12 * MAX_BODY_BYTES) }));

    it.each([
      ["a declared length over the limit", `Content-Type: application/json\r\nContent-Length: ${huge.length}\r\n`, huge, 413, "PAYLOAD_TOO_LARGE"],
      [
        "a chunked body that grows over the limit",
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
        Buffer.concat([Buffer.from(`${huge.length.toString(16)}\r\n`), huge, Buffer.from("\r\n0\r\n\r\n")]),
        413,
        "PAYLOAD_TOO_LARGE",
      ],
      ["a body that is not JSON", `Content-Type: text/plain\r\nContent-Length: ${huge.length}\r\n`, huge, 400, "UNSUPPORTED_MEDIA_TYPE"],
    ])("answers %s once the body is in, then closes", async (_case, headers, body, status, code) => {
      const answer = await sendWholeThenRead(body, headers);
      expect(statusOf(answer), answer.slice(0, 200)).toBe(status);
      expect(answer).toMatch(/\r\nConnection: close\r\n/i);
      expect(bodyOf(answer)).toEqual({ code });
    });
  });

  it("survives a body cut short of its declared length, and serves the next request", async () => {
    // The reader drops the request; node's HTTP parser answers the half-closed connection 400 itself.
    const cut = await send(text, { pieceBytes: 10_000, endAfter: 150_000 });
    expect(cut === "" || statusOf(cut) === 400).toBe(true);
    expect(bodyOf(await send(text, { pieceBytes: 65_536 }))).toEqual({ body: value });
  });
});
