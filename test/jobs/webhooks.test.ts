/**
 * Webhooks over real HTTP: a local receiver gets the finished job signed per Standard Webhooks and
 * verifies it with an independent implementation (the `standardwebhooks` package); a failing
 * receiver is retried with backoff and every attempt is shown on the job; private targets are
 * refused unless allow-listed.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";
import { call, finishedJob, getJob, jobWhere, type JobBody } from "./job-helpers.js";

interface Received {
  body: string;
  headers: Record<string, string>;
}

/** A receiver on loopback that answers the statuses in `plan` in turn (then 200) and keeps what it got. */
async function startReceiver(plan: number[] = []) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers as Record<string, string> });
      res.statusCode = plan.shift() ?? 200;
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { received, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let service: TestService;
let key: string;
let secret: string;

beforeAll(async () => {
  service = await startTestService({ ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1", ATELIER_WEBHOOK_RETRY_BASE_MS: "100" });
  key = await service.createKey("webhooks");
  const response = await call(service, "GET", "/webhooks/secret", key);
  expect(response.status).toBe(200);
  secret = ((await response.json()) as { secret: string }).secret;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
});
afterAll(async () => {
  await service.close();
});

describe("webhookUrl", () => {
  it("delivers the finished job, signed so that an independent Standard Webhooks implementation verifies it", async () => {
    const receiver = await startReceiver();
    try {
      const response = await service.post("/prompt/improve", { prompt: "a lantern", webhookUrl: `http://127.0.0.1:${receiver.port}/hooks` }, key);
      expect(response.status).toBe(202);
      const job = (await response.json()) as JobBody;
      const done = await jobWhere(service, key, job.id, (current) => (current as JobBody & { webhook?: { status: string } }).webhook?.status === "delivered");
      expect(receiver.received).toHaveLength(1);
      const [delivery] = receiver.received;
      const payload = new Webhook(secret).verify(delivery!.body, delivery!.headers) as { type: string; data: JobBody };
      expect(payload.type).toBe("job.succeeded");
      expect(payload.data.id).toBe(job.id);
      expect(payload.data.result).toEqual(done.result);
      expect(delivery!.headers["webhook-id"]).toBe(`msg_${job.id}`);
      expect(() => new Webhook(secret).verify(delivery!.body.replace("lantern", "lanterns"), delivery!.headers)).toThrow();
      const attempts = (done as JobBody & { webhook: { attempts: { statusCode: number }[] } }).webhook.attempts;
      expect(attempts.map((attempt) => attempt.statusCode)).toEqual([200]);
    } finally {
      await receiver.close();
    }
  });

  it("retries with backoff while the receiver fails, recording every attempt", async () => {
    const receiver = await startReceiver([500, 503]);
    try {
      const job = (await (await service.post("/prompt/improve", { prompt: "a kettle", webhookUrl: `http://127.0.0.1:${receiver.port}/` }, key)).json()) as JobBody;
      const done = await jobWhere(service, key, job.id, (current) => (current as JobBody & { webhook?: { status: string } }).webhook?.status === "delivered");
      const attempts = (done as JobBody & { webhook: { attempts: { statusCode: number; at: string; error: string | null }[] } }).webhook.attempts;
      expect(attempts.map((attempt) => attempt.statusCode)).toEqual([500, 503, 200]);
      expect(attempts[0]!.error).toMatch(/answered 500/);
      const gaps = [1, 2].map((i) => Date.parse(attempts[i]!.at) - Date.parse(attempts[i - 1]!.at));
      expect(gaps[0]).toBeGreaterThanOrEqual(100);
      expect(gaps[1]).toBeGreaterThanOrEqual(400);
      // The same message id and a valid signature on every attempt.
      expect(new Set(receiver.received.map((delivery) => delivery.headers["webhook-id"])).size).toBe(1);
      for (const delivery of receiver.received) expect(() => new Webhook(secret).verify(delivery.body, delivery.headers)).not.toThrow();
    } finally {
      await receiver.close();
    }
  });

  it("signs with the new secret after a rotation", async () => {
    const rotated = ((await (await call(service, "POST", "/webhooks/secret", key)).json()) as { secret: string }).secret;
    expect(rotated).not.toBe(secret);
    const receiver = await startReceiver();
    try {
      const job = (await (await service.post("/prompt/improve", { prompt: "a kite", webhookUrl: `http://127.0.0.1:${receiver.port}/` }, key)).json()) as JobBody;
      await jobWhere(service, key, job.id, (current) => (current as JobBody & { webhook?: { status: string } }).webhook?.status === "delivered");
      const [delivery] = receiver.received;
      expect(() => new Webhook(rotated).verify(delivery!.body, delivery!.headers)).not.toThrow();
      expect(() => new Webhook(secret).verify(delivery!.body, delivery!.headers)).toThrow();
    } finally {
      await receiver.close();
      secret = rotated;
    }
  });

  it("refuses private targets that are not allow-listed", async () => {
    const literal = await service.post("/prompt/improve", { prompt: "a gate", webhookUrl: "http://10.0.0.7/hook" }, key);
    expect(literal.status).toBe(400);
    expect(((await literal.json()) as { message: string }).message).toMatch(/webhookUrl: 10\.0\.0\.7 is a private address/);

    // A local name is refused as the image fetcher refuses it, before any lookup, unless an entry
    // names it (test/hostile/regression/security-11-special-use-names.test.ts).
    const byName = await service.post("/prompt/improve", { prompt: "a gate", webhookUrl: "http://localhost:9/hook" }, key);
    expect(byName.status).toBe(400);
    expect(((await byName.json()) as { message: string }).message).toMatch(/webhookUrl: localhost is a local or special-use host name/);
  });

  it("refuses a webhookUrl that is not an http(s) URL", async () => {
    const response = await service.post("/prompt/improve", { prompt: "a gate", webhookUrl: "ftp://example.com/x" }, key);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { issues: { path: string }[] }).issues[0]!.path).toBe("webhookUrl");
  });

  it("without webhookUrl the job shows no webhook", async () => {
    const response = await service.post("/prompt/improve", { prompt: "a bell" }, key, { prefer: "respond-async" });
    const job = await finishedJob(service, key, ((await response.json()) as JobBody).id);
    expect((await getJob(service, key, job.id)) as unknown as Record<string, unknown>).not.toHaveProperty("webhook");
  });
});
