/**
 * Finding 15: slow-body connections were held 110 s and more (Node's request timeout is 300 s,
 * checked every 30 s). Header, whole-request and keep-alive limits are settings; with short ones a
 * trickling client is cut off in about that time, while a normal request still works.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { startTestService, type TestService } from "../../support/test-service.js";

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService({ ATELIER_HTTP_HEADERS_TIMEOUT_MS: "600", ATELIER_HTTP_REQUEST_TIMEOUT_MS: "1200", ATELIER_HTTP_KEEP_ALIVE_TIMEOUT_MS: "500" });
  // A valid key: without one the body is refused unread (401) before it could trickle.
  key = await service.createKey("slow");
});
afterAll(() => service?.close());

/** Opens a socket, writes `chunks` one every 200 ms (then nothing), and resolves with the ms until the server closes it, what it said, and the ms until it began to. */
function holdOpen(chunks: string[]): Promise<{ ms: number; answer: string; answeredMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(service.port, "127.0.0.1");
    let answer = "";
    let answeredMs = Infinity;
    const timers = chunks.map((chunk, i) => setTimeout(() => socket.writable && socket.write(chunk), i * 200));
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error("the server kept the connection open for 10 s"));
    }, 10_000);
    socket.on("data", (data) => {
      answeredMs = Math.min(answeredMs, performance.now() - started);
      answer += data.toString("latin1");
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      timers.forEach(clearTimeout);
      clearTimeout(giveUp);
      resolve({ ms: performance.now() - started, answer, answeredMs });
    });
  });
}

describe("finding 15: slow clients cannot hold sockets", () => {
  it("has documented defaults well under Node's", () => {
    expect(loadConfig({}).http).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000 });
  });

  it("closes a connection whose headers never finish", async () => {
    const { ms } = await holdOpen(["POST /api/v1/prompt/improve HTTP/1.1\r\n", "Host: x\r\n", "X-Slow: 1\r\n"]);
    expect(ms).toBeLessThan(3_000);
  });

  it("answers 408 and closes a connection whose body trickles", async () => {
    const head = `POST /api/v1/prompt/improve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
    const { ms, answer } = await holdOpen([head, ...Array.from({ length: 40 }, () => "          ")]);
    expect(ms).toBeLessThan(4_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it("answers a refusal at once, and closes a connection whose refused body trickles by the request limit", async () => {
    // The rest of a refused body is thrown away as it comes (facade/refuse-unread-body.ts), not for ever.
    const head = "POST /api/v1/prompt/improve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer atl_wrong\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
    const { ms, answer, answeredMs } = await holdOpen([head, ...Array.from({ length: 40 }, () => "          ")]);
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answeredMs).toBeLessThan(1_000);
    expect(ms).toBeGreaterThan(1_000);
    expect(ms).toBeLessThan(4_000);
  });

  it("closes an idle keep-alive connection after the keep-alive limit", async () => {
    const { ms, answer } = await holdOpen(["GET /api/v1/models HTTP/1.1\r\nHost: x\r\n\r\n"]);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(ms).toBeLessThan(3_000);
  });
});
