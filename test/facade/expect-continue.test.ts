/**
 * `Expect: 100-continue` over raw sockets against a whole service (facade/expect-continue.ts): under
 * /api and /trpc the `100 Continue` comes only once the body is wanted, so a refusal from the headers
 * (wrong key, body over the limit) is the first and only answer and the client never uploads; a
 * request that passes gets `100 Continue`, sends its body and its result; other paths get `100
 * Continue` at once, as from Node.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService({ ATELIER_MAX_BODY_BYTES: String(1024 * 1024) });
  key = await service.createKey("continue");
});
afterAll(() => service?.close());

/**
 * Sends `head` (ending with the blank line), then waits for the server's first answer: when that is
 * `100 Continue`, sends `body` and reads on until a final answer is complete. Resolves with everything
 * received, and whether the body was sent.
 */
function expectContinue(head: string, body: string): Promise<{ received: string; bodySent: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(service.port, "127.0.0.1");
    let received = "";
    let bodySent = false;
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no final answer within 5 s; received ${JSON.stringify(received)}`));
    }, 5_000);
    socket.on("error", () => {});
    socket.on("data", (data) => {
      received += data.toString("latin1");
      if (!bodySent && /^HTTP\/1\.1 100 Continue\r\n\r\n/.test(received)) {
        bodySent = true;
        socket.write(body);
      }
      const final = /HTTP\/1\.1 [2-5]\d\d [^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(received);
      const length = Number(/content-length: (\d+)/i.exec(final?.[1] ?? "")?.[1]);
      const complete = final && (/transfer-encoding: chunked/i.test(final[1]!) ? final[2]!.endsWith("0\r\n\r\n") : final[2]!.length >= length);
      if (complete) {
        clearTimeout(giveUp);
        socket.destroy();
        resolve({ received, bodySent });
      }
    });
    socket.write(head);
  });
}

const post = (path: string, bearer: string, length: number) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

describe("Expect: 100-continue", () => {
  const body = JSON.stringify({ prompt: "a lighthouse at dusk" });

  it("answers a wrong key with 401 instead of 100 Continue, so the body is never sent", async () => {
    const { received, bodySent } = await expectContinue(post("/api/v1/prompt/improve", "atl_wrong", 50_000_000), "");
    expect(received).toMatch(/^HTTP\/1\.1 401 /);
    expect(received).not.toMatch(/100 Continue/);
    expect(bodySent).toBe(false);
  });

  it("answers a declared body over the limit with 413 instead of 100 Continue", async () => {
    const { received, bodySent } = await expectContinue(post("/api/v1/prompt/improve", key, 2 * 1024 * 1024), "");
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(bodySent).toBe(false);
  });

  it("sends 100 Continue when the body is wanted, over REST and tRPC", async () => {
    const rest = await expectContinue(post("/api/v1/prompt/improve", key, Buffer.byteLength(body)), body);
    expect(rest.bodySent).toBe(true);
    expect(rest.received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    expect(rest.received).toContain('"original":"a lighthouse at dusk"');
    const trpcBody = JSON.stringify({ prompt: "a lighthouse at dusk" });
    const trpc = await expectContinue(post("/trpc/prompt.improve", key, Buffer.byteLength(trpcBody)), trpcBody);
    expect(trpc.received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });

  it("sends 100 Continue at once on other paths, as Node does", async () => {
    const { received } = await expectContinue(post("/healthz", key, 2), "{}");
    expect(received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 405 /);
  });
});
