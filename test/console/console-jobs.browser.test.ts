/**
 * The Jobs pages in a real browser (Debian's Chromium): a member with two keys submits jobs over
 * REST (`Prefer: respond-async`), sees both keys' jobs (and not another member's), filters them,
 * pages back to older ones, opens an upscale job and sees and downloads its image, reads a prompt
 * job's JSON, watches a long tiled upscale (espcn-x3 from the mirror) move live and cancels it from
 * the page, after which the API reports it canceled. Another member gets the same 404 as for a
 * missing job, on the page, its state and its image; a cancel without the CSRF token is refused.
 * The key page shows and rotates the webhook signing secret the API signs with. axe-core on every
 * page, under the strict CSP.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { Webhook } from "standardwebhooks";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyIdOf } from "../../server/keys/api-key-format.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { finishedJob, getJob, jobWhere, submitAsync, type JobBody } from "../jobs/job-helpers.js";
import { describeViolations, signIn, type SignedInPage, WIDTHS } from "./signed-in-browser.js";
import { horizontalOverflow, launchChromium, screenshotWidths, seriousAxeViolations, skipWithoutChromium, tableOverflow } from "./support/console-browser.js";
import { signInHttp } from "./support/console-service.js";

const modelsFolder = fileTempDir("test-models");

const skip = skipWithoutChromium("console-jobs");
const TILED_MODEL = "espcn-x3";
const hasTiledModel = hasMirrorModel("superres-espcn-x3");
const PASSWORD = "correct horse battery staple";
/** About 100 tiles of 224 px at scale 3: minutes under load, so Cancel lands mid-way. */
const SLOW_JOB = { width: 2400, height: 1800 };
const work = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-jobs-console-"));

let service: TestService;
let browser: Browser;
let alice: SignedInPage;
let alpha: string;
let beta: string;
let bobKey: string;
let upscaleJob: JobBody;
let promptJob: JobBody;
let bobJob: JobBody;
const upscaleBody = async () => ({ imageUrl: dataUrl(await gradientPng(96, 64)), scale: 2, model: "lanczos" });

beforeAll(async () => {
  if (skip) return;
  // Output pixels raised for the long job below: enough tiles that it is still upscaling when canceled.
  // Webhooks may reach a receiver on loopback, retried quickly.
  const webhooks = { ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1", ATELIER_WEBHOOK_RETRY_BASE_MS: "100" };
  service = await startTestService(hasTiledModel ? { ...webhooks, ATELIER_MODELS_DIR: await installModels(modelsFolder, [TILED_MODEL]), ATELIER_MAX_OUTPUT_PIXELS: String(SLOW_JOB.width * SLOW_JOB.height * 9) } : webhooks);
  const { accounts, keys } = service.services;
  const aliceUser = await accounts.createUser({ email: "alice@example.com", displayName: "Alice", password: PASSWORD, role: "member" });
  const bob = await accounts.createUser({ email: "bob@example.com", displayName: "Bob", password: PASSWORD, role: "member" });
  await accounts.createUser({ email: "admin@example.com", displayName: "Ada Admin", password: PASSWORD, role: "admin" });
  alpha = (await keys.create({ name: "alpha", ownerId: aliceUser.id, hourlyLimit: 500 })).key;
  beta = (await keys.create({ name: "beta", ownerId: aliceUser.id, hourlyLimit: 500 })).key;
  bobKey = (await keys.create({ name: "bob's key", ownerId: bob.id })).key;

  upscaleJob = await finishedJob(service, alpha, (await submitAsync(service, "/tools/upscale", await upscaleBody(), alpha)).id);
  promptJob = await finishedJob(service, beta, (await submitAsync(service, "/prompt/improve", { prompt: "a lighthouse at dusk" }, beta)).id);
  bobJob = await finishedJob(service, bobKey, (await submitAsync(service, "/prompt/improve", { prompt: "bob's secret prompt" }, bobKey)).id);
  browser = await launchChromium();
  alice = await signIn(browser, service.url, "alice@example.com", PASSWORD);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

/** The job ids in the Jobs table, top to bottom. */
async function listedIds(page: SignedInPage["page"]): Promise<string[]> {
  return page.locator(".jobs-table tbody th a").allTextContents();
}

describe.skipIf(skip)("jobs list and detail", () => {
  it("lists the jobs of both of the member's keys, newest first, without another member's", async () => {
    const { page } = alice;
    await page.goto("/jobs");
    await expect(page.getByRole("link", { name: "Jobs", exact: true }).getAttribute("aria-current")).resolves.toBe("page");
    expect(await listedIds(page)).toEqual([promptJob.id, upscaleJob.id]);
    const promptRow = page.getByRole("row", { name: new RegExp(promptJob.id) });
    await expect(promptRow.getByRole("cell").allTextContents()).resolves.toEqual([
      "beta",
      "prompt/improve",
      "succeeded",
      expect.stringContaining("Finished (100%)"),
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/),
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/),
    ]);
    await expect(page.getByRole("row", { name: new RegExp(upscaleJob.id) }).getByRole("cell").first().textContent()).resolves.toBe("alpha");
    await expect(page.getByText(bobJob.id).count()).resolves.toBe(0);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    expect(await tableOverflow(page)).toBe(0);
    await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
    expect(await horizontalOverflow(page)).toBe(0);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
  });

  it("filters by key and by status", async () => {
    const { page } = alice;
    await page.goto("/jobs");
    await page.getByLabel("Key").selectOption({ label: `alpha (atl_${keyIdOf(alpha)}_…)` });
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/key=/);
    expect(await listedIds(page)).toEqual([upscaleJob.id]);
    await page.goto("/jobs?status=running");
    await expect(page.getByText("No jobs match these filters.").isVisible()).resolves.toBe(true);
    await page.getByLabel("Status").selectOption("succeeded");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/status=succeeded/);
    expect(await listedIds(page)).toEqual([promptJob.id, upscaleJob.id]);
    // Another member's key is not a filter this member may use.
    expect((await page.goto(`/jobs?key=${keyIdOf(bobKey)}`))!.status()).toBe(404);
  });

  it("shows an upscale job's image from a session-checked route, with a download", async () => {
    const { page } = alice;
    await page.goto("/jobs");
    await page.getByRole("link", { name: upscaleJob.id }).click();
    await page.waitForURL(`**/jobs/${upscaleJob.id}`);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(`Job ${upscaleJob.id}`);
    await expect(page.locator("[data-job-status]").textContent()).resolves.toBe("succeeded");
    const image = page.getByRole("img", { name: /Result image 1 of 1, 192 × 128 pixels/ });
    await image.waitFor();
    await screenshotWidths(page, "console-job-detail");
    await expect(image.evaluate((element: unknown) => [(element as { naturalWidth: number }).naturalWidth, (element as { naturalHeight: number }).naturalHeight])).resolves.toEqual([192, 128]);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: /Download PNG/ }).click()]);
    expect(download.suggestedFilename()).toBe(`atelier-tools-upscale-${upscaleJob.id}.png`);
    const saved = path.join(work, download.suggestedFilename());
    await download.saveAs(saved);
    // Exactly the bytes the API's raw result answers.
    const raw = Buffer.from(await (await fetch(`${service.url}/api/v1/jobs/${upscaleJob.id}/result`, { headers: { authorization: `Bearer ${alpha}` } })).arrayBuffer());
    expect(fs.readFileSync(saved).equals(raw)).toBe(true);
    await expect(sharp(saved).metadata()).resolves.toMatchObject({ width: 192, height: 128, format: "png" });
    // The request body is shown with its image abbreviated, not as a megabyte of base64.
    await expect(page.locator("details").filter({ hasText: "Request body" }).textContent()).resolves.toMatch(/"imageUrl": "data:image\/png;base64,… \(about [\d.]+ KiB\)"/);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
    expect(await horizontalOverflow(page)).toBe(0);
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    expect(alice.problems).toEqual([]);
  });

  it("shows a prompt job's result as JSON", async () => {
    const { page } = alice;
    await page.goto(`/jobs/${promptJob.id}`);
    const result = page.locator("section").filter({ has: page.getByRole("heading", { name: "Result" }) });
    const shown = JSON.parse((await result.locator("pre").textContent())!) as unknown;
    expect(shown).toEqual(promptJob.result);
    await expect(page.getByRole("button", { name: "Cancel job" }).count()).resolves.toBe(0);
  });

  it("pages back to older jobs, 20 at a time", async () => {
    for (let n = 0; n < 20; n++) {
      const response = await service.post("/prompt/improve", { prompt: `lighthouse ${n}` }, n % 2 ? alpha : beta, { prefer: "wait=10" });
      expect(response.status).toBe(200);
    }
    const { page } = alice;
    await page.goto("/jobs");
    const first = await listedIds(page);
    expect(first).toHaveLength(20);
    expect(first).not.toContain(promptJob.id);
    await page.getByRole("link", { name: "Older jobs" }).click();
    await page.waitForURL(/before=/);
    expect(await listedIds(page)).toEqual([promptJob.id, upscaleJob.id]);
    await expect(page.getByRole("link", { name: "Older jobs" }).count()).resolves.toBe(0);
    await page.getByRole("link", { name: "Newest jobs" }).click();
    await page.waitForURL((url) => url.search === "");
    expect(await listedIds(page)).toEqual(first);
  });

  it("shows an admin only their own keys' jobs: another user's key and job are 404", async () => {
    const admin = await signIn(browser, service.url, "admin@example.com", PASSWORD);
    expect((await admin.page.goto(`/jobs?key=${keyIdOf(bobKey)}`))!.status()).toBe(404);
    expect((await admin.page.goto(`/jobs/${bobJob.id}`))!.status()).toBe(404);
    expect((await admin.page.request.get(`/jobs/${bobJob.id}/state`)).status()).toBe(404);
    await admin.page.goto("/jobs");
    await expect(admin.page.getByRole("row", { name: new RegExp(bobJob.id) }).count()).resolves.toBe(0);
    expect(describeViolations(await seriousAxeViolations(admin.page))).toEqual([]);
    await admin.context.close();
  });
});

describe.skipIf(skip)("who may see a job", () => {
  it("answers another member exactly as for a missing job: page, state and image", async () => {
    const bob = await signIn(browser, service.url, "bob@example.com", PASSWORD);
    const { page } = bob;
    const theirs = await page.goto(`/jobs/${upscaleJob.id}`);
    const theirsText = await page.locator("main").textContent();
    const missing = await page.goto("/jobs/job_doesNotExist00000000");
    expect([theirs!.status(), missing!.status()]).toEqual([404, 404]);
    expect(await page.locator("main").textContent()).toBe(theirsText);
    expect((await page.request.get(`/jobs/${upscaleJob.id}/state`)).status()).toBe(404);
    expect((await page.request.get(`/jobs/${upscaleJob.id}/images/0`)).status()).toBe(404);
    expect((await page.request.get(`/jobs/${bobJob.id}/state`)).status()).toBe(200);
    await page.goto("/jobs");
    expect(await listedIds(page)).toEqual([bobJob.id]);
    await bob.context.close();
  });

  it("sends a signed-out visitor to sign in and refuses the image", async () => {
    const page = await (await browser.newContext({ baseURL: service.url })).newPage();
    await page.goto(`/jobs/${upscaleJob.id}`);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    expect((await page.request.get(`/jobs/${upscaleJob.id}/images/0`, { maxRedirects: 0 })).status()).toBe(303);
    await page.context().close();
  });
});

describe.skipIf(skip || !hasTiledModel)("a running job (espcn-x3 tiles)", () => {
  it("moves live on the list, refuses a cancel without the CSRF token, and Cancel on its page stops it", async () => {
    const body = { imageUrl: dataUrl(await sharp({ create: { ...SLOW_JOB, channels: 3, background: "#8a3b6d" } }).png().toBuffer()), scale: 3, model: TILED_MODEL };
    const job = await submitAsync(service, "/tools/upscale", body, beta);
    const { page } = alice;
    await page.goto("/jobs");
    const label = page.locator(`[data-job-progress-label="${job.id}"]`);
    const before = await label.textContent();
    // Updated in place by the page's own polling, with no reload.
    const seen = [before];
    for (let waited = 0; !/^Tiles: \d+ of \d+/.test(seen.at(-1) ?? "") || seen.at(-1) === before; waited += 250) {
      if (waited > 90_000) throw new Error(`progress never moved on the page: ${seen.join(" | ")}; the API says ${JSON.stringify((await getJob(service, beta, job.id)).progress)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const text = await label.textContent();
      if (text !== seen.at(-1)) seen.push(text);
    }
    await expect(page.locator(`[data-job-status="${job.id}"]`).textContent()).resolves.toBe("running");
    await screenshotWidths(page, "console-jobs");
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);

    // Same origin, a live session, but no token: refused, and the job runs on.
    const session = await signInHttp(service.url, "alice@example.com", PASSWORD);
    const forged = await fetch(`${service.url}/jobs/${job.id}/cancel`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: service.url, cookie: session.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
    expect(forged.status).toBe(403);
    expect((await getJob(service, beta, job.id)).status).toBe("running");

    await page.getByRole("link", { name: job.id }).click();
    await page.waitForURL(`**/jobs/${job.id}`);
    const detailLabel = await page.locator("[data-job-progress-label]").textContent();
    expect(`${detailLabel}; API: ${JSON.stringify(await getJob(service, beta, job.id))}`).toMatch(/^Tiles: \d+ of \d+/);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    await page.getByRole("button", { name: "Cancel job" }).click();
    await page.getByRole("status").filter({ hasText: "Job canceled." }).waitFor();
    await expect(page.locator("[data-job-status]").textContent()).resolves.toBe("canceled");
    await expect(page.getByRole("heading", { name: /^Error \(HTTP \d+\)$/ }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole("button", { name: "Cancel job" }).count()).resolves.toBe(0);

    const canceled = await getJob(service, beta, job.id);
    expect(canceled.status).toBe("canceled");
    expect(canceled.error?.code).toBe("CANCELLED");
    // Stopped part-way through its tiles, with no result.
    expect(canceled.progress.step).toBeLessThan(canceled.progress.steps);
    expect(canceled.result).toBeUndefined();
    // And the API agrees there is nothing left to cancel.
    expect((await fetch(`${service.url}/api/v1/jobs/${job.id}`, { method: "DELETE", headers: { authorization: `Bearer ${beta}` } })).status).toBe(409);

    const bob = await signInHttp(service.url, "bob@example.com", PASSWORD);
    const bobCancel = await fetch(`${service.url}/jobs/${job.id}/cancel`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: service.url, cookie: bob.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: bob.csrfToken }),
    });
    expect(bobCancel.status).toBe(404);
    expect(alice.problems).toEqual([]);
  }, 180_000);
});

describe.skipIf(skip)("webhook signing secret on the key page", () => {
  it("shows the key's secret on request and rotates it, as the API sees it", async () => {
    const { page } = alice;
    await page.goto(`/keys/${keyIdOf(alpha)}`);
    await expect(page.locator("#webhook-secret").count()).resolves.toBe(0);
    await page.getByRole("button", { name: "Show signing secret" }).click();
    const shown = await page.getByRole("textbox", { name: "Signing secret" }).inputValue();
    const api = async () => ((await (await fetch(`${service.url}/api/v1/webhooks/secret`, { headers: { authorization: `Bearer ${alpha}` } })).json()) as { secret: string }).secret;
    expect(shown).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(shown).toBe(await api());
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);

    await page.getByRole("button", { name: "Rotate signing secret" }).click();
    await page.getByText("Secret rotated.").waitFor();
    const rotated = await page.getByRole("textbox", { name: "Signing secret" }).inputValue();
    expect(rotated).not.toBe(shown);
    expect(rotated).toBe(await api());
    await screenshotWidths(page, "console-key-webhook-secret");

    const session = await signInHttp(service.url, "alice@example.com", PASSWORD);
    const forged = await fetch(`${service.url}/keys/${keyIdOf(alpha)}/webhook-secret`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: service.url, cookie: session.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ action: "rotate" }),
    });
    expect(forged.status).toBe(403);
    expect(await api()).toBe(rotated);
    const bob = await signInHttp(service.url, "bob@example.com", PASSWORD);
    const bobShow = await fetch(`${service.url}/keys/${keyIdOf(alpha)}/webhook-secret`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: service.url, cookie: bob.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: bob.csrfToken, action: "show" }),
    });
    expect(bobShow.status).toBe(404);
    expect(await bobShow.text()).not.toContain(rotated);
    expect(alice.problems).toEqual([]);
  });

  it("lists a job's webhook attempts, and its deliveries verify with the secret the key page shows", async () => {
    // A receiver on loopback that fails the first delivery and takes the second.
    const received: Array<{ body: string; headers: Record<string, string> }> = [];
    const plan = [500];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers as Record<string, string> });
        res.statusCode = plan.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const response = await service.post("/prompt/improve", { prompt: "a lantern", webhookUrl }, alpha, { prefer: "respond-async" });
      expect(response.status).toBe(202);
      const job = (await response.json()) as JobBody;
      await jobWhere(service, alpha, job.id, (current) => (current as JobBody & { webhook?: { status: string } }).webhook?.status === "delivered");

      const { page } = alice;
      await page.goto(`/keys/${keyIdOf(alpha)}`);
      await page.getByRole("button", { name: "Show signing secret" }).click();
      const secret = await page.getByRole("textbox", { name: "Signing secret" }).inputValue();
      expect(received).toHaveLength(2);
      for (const delivery of received) expect(new Webhook(secret).verify(delivery.body, delivery.headers)).toMatchObject({ type: "job.succeeded", data: { id: job.id, status: "succeeded" } });

      await page.goto(`/jobs/${job.id}`);
      const webhook = page.locator("section").filter({ has: page.getByRole("heading", { name: "Webhook" }) });
      await expect(webhook.locator("dd").allTextContents()).resolves.toEqual([webhookUrl, "delivered"]);
      const attempts = page.getByRole("table", { name: "Delivery attempts" }).locator("tbody tr");
      await expect(attempts.count()).resolves.toBe(2);
      await expect(attempts.nth(0).locator("td").nth(1).textContent()).resolves.toBe("500");
      await expect(attempts.nth(1).locator("td").nth(1).textContent()).resolves.toBe("200");
      expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
      expect(alice.problems).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
