/**
 * Security review, item 3: with ATELIER_ALLOWED_PRIVATE_HOSTS=127.0.0.1:<port>, a webhook reached
 * another port of 127.0.0.1: webhook targets ignored the entry's port. They now obey the image
 * fetcher's rule: an entry opens its own port, or without one the port of the URL. Checked when the
 * job is submitted and again at each delivery attempt (a delivery stored under a wider allow-list is
 * refused once the service restarts with a narrower one).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileTempDir } from "../../support/temp-dir.js";
import { startTestService, type TestService } from "../../support/test-service.js";

interface Webhook {
  status: string;
  attempts: { statusCode: number | null; error: string | null }[];
}

/** A loopback receiver answering `status` to every POST; counts them. */
async function startReceiver(status: number) {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, received: () => received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function webhookOf(service: TestService, key: string, id: string): Promise<Webhook> {
  const response = await fetch(`${service.url}/api/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return ((await response.json()) as { webhook: Webhook }).webhook;
}

async function webhookWhere(service: TestService, key: string, id: string, check: (webhook: Webhook) => boolean): Promise<Webhook> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const webhook = await webhookOf(service, key, id);
    if (check(webhook)) return webhook;
    if (Date.now() > deadline) throw new Error(`webhook of ${id} never matched; last ${JSON.stringify(webhook)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Delivered or given up: neither `waiting` (the job still runs) nor `pending` (retried). */
function settled(webhook: Webhook): boolean {
  return webhook.status === "delivered" || webhook.status === "failed";
}

let opened: Awaited<ReturnType<typeof startReceiver>>;
let other: Awaited<ReturnType<typeof startReceiver>>;
// The data folder of the service restarted with a narrower allow-list.
const restartedDataDir = fileTempDir("test");
const services: TestService[] = [];

beforeAll(async () => {
  opened = await startReceiver(204);
  other = await startReceiver(500);
});
afterAll(async () => {
  for (const service of services) await service.close();
  await opened.close();
  await other.close();
});

describe("security item 3: webhook targets and allow-list ports", () => {
  it("an entry with a port opens that port only, when the job is submitted", async () => {
    const service = await startTestService({ ATELIER_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${opened.port}`, ATELIER_WEBHOOK_RETRY_BASE_MS: "100" });
    services.push(service);
    const key = await service.createKey("ports");

    const allowed = await service.post("/prompt/improve", { prompt: "a harbour", webhookUrl: `http://127.0.0.1:${opened.port}/hook` }, key);
    expect(allowed.status).toBe(202);
    const job = (await allowed.json()) as { id: string };
    expect(await webhookWhere(service, key, job.id, settled)).toMatchObject({ status: "delivered" });

    const refused = await service.post("/prompt/improve", { prompt: "a harbour", webhookUrl: `http://127.0.0.1:${other.port}/hook` }, key);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      code: "INVALID_INPUT",
      message: `Invalid request: webhookUrl: 127.0.0.1 is a private address webhooks may not reach on port ${other.port}.`,
    });
    expect(other.received()).toBe(0);
  });

  it("refuses at delivery a stored target the allow-list no longer opens on its port", async () => {
    // A bare entry opens the URL's own port: the delivery is accepted, and its receiver fails.
    const wide = await startTestService({ ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1", ATELIER_WEBHOOK_RETRY_BASE_MS: "3000" }, restartedDataDir);
    const key = await wide.createKey("narrowed");
    const submitted = await wide.post("/prompt/improve", { prompt: "a pier", webhookUrl: `http://127.0.0.1:${other.port}/hook` }, key);
    expect(submitted.status).toBe(202);
    const job = (await submitted.json()) as { id: string };
    const first = await webhookWhere(wide, key, job.id, (webhook) => webhook.attempts.length > 0);
    expect(first).toMatchObject({ status: "pending", attempts: [{ statusCode: 500 }] });
    await wide.close();
    const seen = other.received();

    const narrow = await startTestService({ ATELIER_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${opened.port}`, ATELIER_WEBHOOK_RETRY_BASE_MS: "3000" }, restartedDataDir);
    services.push(narrow);
    const done = await webhookWhere(narrow, key, job.id, settled);
    expect(done.status).toBe("failed");
    expect(done.attempts.at(-1)).toMatchObject({ statusCode: null, error: `Refused: 127.0.0.1 is a private address webhooks may not reach on port ${other.port}.` });
    expect(other.received()).toBe(seen);
  });
});
