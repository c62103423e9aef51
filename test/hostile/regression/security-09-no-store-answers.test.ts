/**
 * `GET`/`POST /api/v1/webhooks/secret` and `GET /api/v1/jobs/{id}/result` answered without
 * `Cache-Control: no-store`, so a browser or shared cache could keep a signing secret or someone's
 * result. Every API answer now says it (facade/no-store.ts), whatever writes it: JSON, raw images,
 * event streams, errors, tRPC; the console's pages that show a secret or a result say it too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataUrl, gradientPng } from "../../support/test-images.js";
import { postForm, postFormAndFollow, signInHttp, startConsoleService, type ConsoleService, type HttpSession } from "../../console/support/console-service.js";

const PASSWORD = "correct horse battery staple";

let service: ConsoleService;
let session: HttpSession;
let key: string;
let keyId: string;
let imageUrl: string;

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${service.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(init.headers as Record<string, string>) } });

function expectNoStore(response: Response, what: string): void {
  expect(response.headers.get("cache-control") ?? "", what).toMatch(/(^|,\s*)no-store(\s*,|$)/);
}

/** A finished upscale job (with its result), submitted with `Prefer: respond-async`. */
async function finishedJob(): Promise<{ id: string; accepted: Response }> {
  const accepted = await api("/tools/upscale", { method: "POST", headers: { prefer: "respond-async" }, body: JSON.stringify({ imageUrl, scale: 3 }) });
  expect(accepted.status).toBe(202);
  const { id } = (await accepted.json()) as { id: string };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const job = (await (await api(`/jobs/${id}`)).json()) as { status: string };
    if (job.status === "succeeded") return { id, accepted };
    if (job.status === "failed" || job.status === "canceled") throw new Error(`job ${id} ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${id} did not finish`);
}

beforeAll(async () => {
  service = await startConsoleService({ ATELIER_METRICS_PORT: "0", ATELIER_PROVISION_MODELS: "false" });
  const user = await service.createUser("member@example.com", PASSWORD);
  const created = await service.services.keys.create({ name: "member's key", ownerId: user.id });
  key = created.key;
  keyId = created.record.id;
  session = await signInHttp(service.url, "member@example.com", PASSWORD);
  imageUrl = dataUrl(await gradientPng(16, 12));
});
afterAll(async () => {
  await service?.close();
});

describe("answers that carry a secret or a result say Cache-Control: no-store", () => {
  it("the webhook signing secret, shown and rotated", async () => {
    for (const method of ["GET", "POST"]) {
      const answer = await api("/webhooks/secret", { method, ...(method === "POST" ? { body: "{}" } : {}) });
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { secret: string }).secret).toMatch(/^whsec_/);
      expectNoStore(answer, `${method} /webhooks/secret`);
    }
  });

  it("a job: its 202, the job with its result inline, its raw result, its events and the job list", async () => {
    const { id, accepted } = await finishedJob();
    expectNoStore(accepted, "202");
    const job = await api(`/jobs/${id}`);
    expect(((await job.json()) as { result?: unknown }).result).toBeDefined();
    expectNoStore(job, "GET /jobs/{id}");
    const result = await api(`/jobs/${id}/result`);
    expect(result.status).toBe(200);
    expect(result.headers.get("content-type")).toBe("image/png");
    await result.arrayBuffer();
    expectNoStore(result, "GET /jobs/{id}/result");
    const events = await api(`/jobs/${id}/events`);
    expect(await events.text()).toContain("event: result");
    expectNoStore(events, "GET /jobs/{id}/events");
    const list = await api("/jobs");
    expect(list.status).toBe(200);
    expectNoStore(list, "GET /jobs");
  });

  it("a synchronous result, as JSON and as raw bytes, over REST and tRPC", async () => {
    const json = await api("/tools/upscale", { method: "POST", body: JSON.stringify({ imageUrl, scale: 3 }) });
    expect(json.status).toBe(200);
    expectNoStore(json, "POST /tools/upscale");
    const raw = await api("/tools/upscale", { method: "POST", headers: { accept: "image/png" }, body: JSON.stringify({ imageUrl, scale: 3 }) });
    expect(raw.headers.get("content-type")).toBe("image/png");
    expectNoStore(raw, "POST /tools/upscale, Accept: image/png");
    const trpc = await fetch(`${service.url}/trpc/tools.upscale`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ imageUrl, scale: 3 }) });
    expect(trpc.status).toBe(200);
    expectNoStore(trpc, "tRPC tools.upscale");
  });

  it("refusals too, so no cache keeps an answer for a key", async () => {
    const unauthorized = await fetch(`${service.url}/api/v1/webhooks/secret`);
    expect(unauthorized.status).toBe(401);
    expectNoStore(unauthorized, "401");
  });

  it("the console's pages that show a new key, a signing secret or a result image", async () => {
    const { page: created } = await postFormAndFollow(service.url, "/keys", session, { name: "another" });
    expect(await created.text()).toContain("new-key-secret");
    expectNoStore(created, "GET /keys/{id}/created");
    const { page: secret } = await postFormAndFollow(service.url, `/keys/${keyId}/webhook-secret`, session, { action: "show" });
    expect(await secret.text()).toContain("whsec_");
    expectNoStore(secret, "GET /keys/{id}/webhook-secret");
    const { id } = await finishedJob();
    const image = await fetch(`${service.url}/jobs/${id}/images/0`, { headers: { cookie: session.cookie } });
    expect(image.headers.get("content-type")).toBe("image/png");
    expectNoStore(image, "GET /jobs/{id}/images/0");
  });
});
