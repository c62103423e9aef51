/**
 * Security review, item 2: receivers that answer slowly on purpose (their headers then a body byte
 * at a time, or their headers a byte at a time) held every webhook attempt of the router, so another
 * key's webhook was never sent, and SIGTERM waited for them past its grace period.
 *
 * A real `npm start` process: one key's jobs aim at dripping receivers (more than the router's
 * places), then another key's job at a well-behaved receiver, which must get its webhook while the
 * drippers still drip; each attempt ends at ATELIER_WEBHOOK_TIMEOUT_MS; SIGTERM then cuts off the
 * attempts still running when the short grace period ends (to be retried) and the process exits 0.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { MAX_IN_FLIGHT } from "../../../jobs/webhooks/webhook-deliverer.js";
import { openApiKeyStore } from "../../../server/keys/open-api-key-store.js";
import { makeTempDir } from "../../support/temp-dir.js";
import { mainProcessEnv, startMainProcess } from "../../support/main-process.js";

/** Long beside the good receiver's normal time, short beside the test's. */
const ATTEMPT_DEADLINE_MS = 6_000;
const DRIP_EVERY_MS = 300;
/** More deliveries of one key to receivers that drip their headers than the router attempts at once. */
const HEADER_DRIPPERS = MAX_IN_FLIGHT + 4;
const BODY_DRIPPERS = 4;

const dataDir = makeTempDir("test");
const cleanups: (() => unknown)[] = [];
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const cleanup of cleanups) await cleanup();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/**
 * A receiver that reads a request's head and then never finishes its answer: on `/headers/...` it
 * sends the status line and one header byte per DRIP_EVERY_MS, on `/body/...` its whole head and
 * then one body byte per DRIP_EVERY_MS. Keeps the paths it is holding open.
 */
async function startDrippingReceiver() {
  const open = new Map<string, number>();
  const ended: string[] = [];
  let doubled = false;
  const server = net.createServer((socket) => {
    let head = "";
    let path: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      if (path !== undefined) return;
      head += chunk.toString("latin1");
      const request = /^POST (\S+) HTTP\/1\.1\r\n/.exec(head);
      if (!request || !head.includes("\r\n\r\n")) return;
      path = request[1]!;
      if ((open.get(path) ?? 0) > 0) doubled = true;
      open.set(path, (open.get(path) ?? 0) + 1);
      socket.write(path.startsWith("/headers/") ? "HTTP/1.1 200 OK\r\nX-Drip: " : "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
      timer = setInterval(() => socket.write("a"), DRIP_EVERY_MS);
    });
    socket.on("close", () => {
      clearInterval(timer);
      if (path === undefined) return;
      open.set(path, open.get(path)! - 1);
      ended.push(path);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    port: (server.address() as AddressInfo).port,
    /** Connections held open now whose path starts with `prefix`. */
    holding: (prefix: string) => [...open].filter(([path, count]) => path.startsWith(prefix) && count > 0).length,
    /** Connections whose path starts with `prefix` that have closed. */
    ended: (prefix: string) => ended.filter((path) => path.startsWith(prefix)).length,
    /** True when one delivery was attempted again while its first attempt was still open. */
    doubled: () => doubled,
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`never happened within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Webhook {
  status: string;
  attempts: { statusCode: number | null; error: string | null }[];
}

describe("security item 2: slow webhook receivers", () => {
  it("never hold another key's webhooks, end at the attempt deadline, and are cut off at the end of the shutdown grace period", async () => {
    const env = mainProcessEnv(dataDir, {
      ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1",
      ATELIER_WEBHOOK_TIMEOUT_MS: String(ATTEMPT_DEADLINE_MS),
      // No retry within the test: every attempt seen is a first one.
      ATELIER_WEBHOOK_RETRY_BASE_MS: "600000",
      ATELIER_SHUTDOWN_GRACE_MS: "1000",
    });
    const keys = await openApiKeyStore(loadConfig(env));
    const hostile = (await keys.create({ name: "dripping receivers", hourlyLimit: null })).key;
    const other = (await keys.create({ name: "good receiver", hourlyLimit: null })).key;
    await keys.close();

    const dripping = await startDrippingReceiver();
    let goodDeliveries = 0;
    let headerDrippersEndedAtGood: number | undefined;
    const good = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        goodDeliveries++;
        headerDrippersEndedAtGood ??= dripping.ended("/headers/");
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => good.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => good.close(resolve)));

    const started = await startMainProcess(env);
    child = started.child;
    const { url, output, exited } = started;
    const submit = async (key: string, webhookUrl: string): Promise<string> => {
      const response = await fetch(`${url}/api/v1/prompt/improve`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ prompt: "a lighthouse", webhookUrl }),
      });
      expect(response.status).toBe(202);
      return ((await response.json()) as { id: string }).id;
    };
    const webhookOf = async (key: string, id: string): Promise<Webhook> => {
      const response = await fetch(`${url}/api/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } });
      return ((await response.json()) as { webhook: Webhook }).webhook;
    };

    const hostileJobs: { id: string; kind: "headers" | "body" }[] = [];
    for (let i = 0; i < BODY_DRIPPERS + HEADER_DRIPPERS; i++) {
      const kind = i < BODY_DRIPPERS ? "body" : "headers";
      hostileJobs.push({ id: await submit(hostile, `http://127.0.0.1:${dripping.port}/${kind}/${i}`), kind });
    }
    await until("every hostile delivery is queued", async () => {
      const webhooks = await Promise.all(hostileJobs.map((job) => webhookOf(hostile, job.id)));
      return webhooks.every((webhook) => webhook.status !== "waiting");
    });
    await until("the dripping receivers hold attempts", () => dripping.holding("/headers/") > 0);

    // The other key's webhook is sent at once, while the header drippers still drip: no attempt of
    // theirs reaches its deadline in between, so it never waits for the hostile key's places.
    const headerDrippersEndedAtSubmission = dripping.ended("/headers/");
    const goodJob = await submit(other, `http://127.0.0.1:${(good.address() as AddressInfo).port}/hook`);
    await until("the good receiver got its webhook", () => goodDeliveries > 0, 15_000);
    await until("the good webhook is recorded as delivered", async () => (await webhookOf(other, goodJob)).status === "delivered");
    expect(goodDeliveries).toBe(1);
    expect(headerDrippersEndedAtGood).toBe(headerDrippersEndedAtSubmission);

    // A body that drips does not hold the attempt: its status is all that is read.
    const bodyDripper = hostileJobs.find((job) => job.kind === "body")!;
    const bodyWebhook = await until("a body dripper's webhook is recorded", async () => {
      const webhook = await webhookOf(hostile, bodyDripper.id);
      return webhook.attempts.length > 0 ? webhook : undefined;
    });
    expect(bodyWebhook).toMatchObject({ status: "delivered", attempts: [{ statusCode: 200, error: null }] });

    // Headers that drip run into the attempt's deadline, and the delivery waits for its retry.
    const headerDripper = hostileJobs.find((job) => job.kind === "headers")!;
    const headerWebhook = await until("a header dripper's attempt ends", async () => {
      const webhook = await webhookOf(hostile, headerDripper.id);
      return webhook.attempts.length > 0 ? webhook : undefined;
    });
    expect(headerWebhook.status).toBe("pending");
    expect(headerWebhook.attempts).toEqual([{ statusCode: null, error: `No answer: no answer within ${ATTEMPT_DEADLINE_MS} ms`, at: expect.any(String) }]);

    // SIGTERM while header drippers are held: they are cut off when the grace period ends.
    await until("header drippers are held again", () => dripping.holding("/headers/") > 0);
    child.kill("SIGTERM");
    const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 15_000))]);
    expect(code).toBe(0);
    expect(dripping.doubled()).toBe(false);
    const cutOff = output
      .filter((line) => line.includes("webhook not delivered"))
      .map((line) => JSON.parse(line) as { status: string; error: string })
      .filter((line) => /shut down before the receiver answered/.test(line.error));
    expect(cutOff.length).toBeGreaterThan(0);
    expect(cutOff.every((line) => line.status === "pending")).toBe(true);
    expect(output.join("\n")).toContain("shut down cleanly");
  }, 90_000);
});
