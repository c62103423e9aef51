/**
 * The playground with the console session, in a real browser (Debian's Chromium): a member picks
 * one of their keys by name (no secret on the page), uploads a real photo, and the call is charged
 * to that key (its quota and usage move, the other key's do not); the result shows as a
 * before/after slider with a download named after the photo, and joins the gallery of recent
 * results. A session call without the CSRF token, from another origin, or naming another user's
 * key is refused before any charge. The pickers come from the installed models (styles with
 * thumbnails the service renders once and keeps, generation options the model does not take
 * hidden, the prompt engine's presets), errors show beside their field, the improved prompt comes
 * back as text that opens the generate page, and the curl command on the page runs as printed.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quotaChargeOf } from "../../server/quota/quota-charge.js";
import type { ApiKeyRecord } from "../../server/keys/api-key-store.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { testPhoto } from "../support/test-assets.js";
import type { TestService } from "../support/test-service.js";
import { describeViolations, startBrowserConsole, type BrowserConsole, type SignedInPage, WIDTHS } from "./signed-in-browser.js";
import { horizontalOverflow, naturalSize, seriousAxeViolations } from "./support/console-browser.js";

const modelsFolder = fileTempDir("test-models");

const STYLE = "mathura";
let atelier: BrowserConsole<"alice" | "bob">;
let service: TestService;
let member: SignedInPage;
let keys: { first: { id: string; key: string }; second: { id: string; key: string }; bobs: { id: string; key: string } };
const work = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-playground-session-"));
/** A real photo of about 300 KB, under a name with a space (the curl command must quote it). */
const photo = path.join(work, "cat photo.png");
let photoSize: { width: number; height: number };

async function remaining(id: string): Promise<number> {
  const { keys: store, quota } = service.services;
  const record = (await store.get(id)) as ApiKeyRecord;
  return (await quota.peek(await quotaChargeOf(record, service.services))).remaining;
}

async function usageOf(id: string): Promise<Array<{ operation: string; status: number; requests: number }>> {
  await service.services.usage.flush();
  return (await service.services.usage.exportRows("24h", { keyIds: [id] })).map((row) => ({ operation: row.operation, status: row.status, requests: row.requests }));
}

beforeAll(async () => {
  atelier = await startBrowserConsole({ ATELIER_MODELS_DIR: await installModels(modelsFolder, [STYLE, "cvae-quickdraw"]) }, ["alice", "bob"]);
  service = atelier.service;
  const { alice, bob } = atelier.users;
  const store = service.services.keys;
  const made = async (name: string, ownerId: string) => {
    const created = await store.create({ name, ownerId, hourlyLimit: 50 });
    return { id: created.record.id, key: created.key };
  };
  keys = { first: await made("first key", alice.id), second: await made("second key", alice.id), bobs: await made("bob's key", bob.id) };
  fs.copyFileSync(testPhoto("chelsea.png"), photo);
  const meta = await sharp(photo).metadata();
  photoSize = { width: meta.width!, height: meta.height! };
  member = await atelier.signIn("alice");
}, 120_000);

afterAll(async () => {
  await atelier?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

describe("playground with the session", () => {
  it("charges a call to the key picked by name: its quota and usage move, the other key's do not", async () => {
    expect(fs.statSync(photo).size).toBeGreaterThan(200_000);
    const { page } = member;
    await page.goto("/playground/upscale");
    // The secret is never on the page: keys are offered by name, pasting is the other choice.
    await expect(page.getByLabel("Charge to").locator("option").allTextContents()).resolves.toEqual([
      expect.stringMatching(/^first key \(atl_.+_…\)$/),
      expect.stringMatching(/^second key \(atl_.+_…\)$/),
      "Paste a key's secret instead",
    ]);
    expect(await page.content()).not.toContain(keys.second.key);
    await expect(page.getByLabel("API key").isVisible()).resolves.toBe(false);
    await page.getByLabel("Charge to").selectOption({ label: (await page.getByLabel("Charge to").locator("option").nth(1).textContent())! });
    await page.getByLabel("Image file").setInputFiles(photo);
    await page.locator("#imageUrl-preview img").waitFor();
    await page.getByLabel("Model").selectOption("lanczos");
    await page.getByRole("button", { name: "Run" }).click();
    const status = page.getByRole("status").filter({ hasText: /Done in|Failed/ });
    await status.waitFor({ timeout: 60_000 });
    expect(await status.textContent()).toMatch(/^Done in [\d.]+ s \(job .+, request .+\)\. This key has 49 of 50 requests left this hour\.$/);

    expect(await remaining(keys.second.id)).toBe(49);
    expect(await remaining(keys.first.id)).toBe(50);
    expect(await usageOf(keys.second.id)).toEqual([{ operation: "tools/upscale", status: 200, requests: 1 }]);
    expect(await usageOf(keys.first.id)).toEqual([]);

    // Before and after, with a slider between them; the result is the photo twice as large.
    const compare = page.locator("#playground-result .playground-compare");
    await expect(compare.getByRole("slider", { name: /Before and after/ }).count()).resolves.toBe(1);
    await expect(naturalSize(compare.locator(".playground-compare-after"))).resolves.toEqual([
      photoSize.width * 2,
      photoSize.height * 2,
    ]);
    await compare.getByRole("slider").fill("20");
    await expect(compare.evaluate((box: unknown) => (box as { style: { getPropertyValue(name: string): string } }).style.getPropertyValue("--split"))).resolves.toBe("20%");
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download PNG" }).click()]);
    expect(download.suggestedFilename()).toBe("cat photo-upscaled-x2.png");
    await expect(sharp(await download.path()).metadata()).resolves.toMatchObject({ width: photoSize.width * 2, format: "png" });
    await expect(page.locator("#playground-gallery li").count()).resolves.toBe(1);

    // The gallery is the user's jobs: after a reload it is still there, its image served with the session.
    await page.reload();
    const thumbnail = page.locator("#playground-gallery li img").first();
    await thumbnail.waitFor();
    expect((await naturalSize(thumbnail))[0]).toBe(photoSize.width * 2);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    await page.screenshot({ path: "/tmp/playground-upscale-session.png", fullPage: true });
    expect(member.problems).toEqual([]);
  }, 90_000);

  it("refuses a session call without the CSRF token, from another origin, or naming another user's key, before charging", async () => {
    const { page } = member;
    await page.goto("/playground/upscale");
    const token = await page.locator('meta[name="csrf-token"]').getAttribute("content");
    const call = (headers: Record<string, string>) =>
      page.evaluate(
        `fetch("/api/v1/tools/upscale", { method: "POST", headers: ${JSON.stringify({ "content-type": "application/json", ...headers })}, body: JSON.stringify({ imageUrl: "data:image/png;base64,iVBORw0KGgo=" }) }).then(async (response) => ({ status: response.status, body: await response.json() }))`,
      ) as Promise<{ status: number; body: { code: string; message: string } }>;
    const before = { first: await remaining(keys.first.id), bobs: await remaining(keys.bobs.id) };

    const withoutToken = await call({ "x-atelier-key-id": keys.first.id });
    expect(withoutToken).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED", message: expect.stringContaining("security token") } });
    const staleToken = await call({ "x-atelier-key-id": keys.first.id, "x-csrf-token": `${token!.slice(0, -2)}xx` });
    expect(staleToken).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
    const othersKey = await call({ "x-atelier-key-id": keys.bobs.id, "x-csrf-token": token! });
    expect(othersKey).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED", message: expect.stringContaining("No such key among yours") } });

    // The cookie rides along on a cross-site request, but the origin is not the console's.
    const crossOrigin = await fetch(`${service.url}/api/v1/tools/upscale`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: "https://evil.example",
        cookie: (await member.context.cookies()).map((cookie) => `${cookie.name}=${cookie.value}`).join("; "),
        "x-atelier-key-id": keys.first.id,
        "x-csrf-token": token!,
      },
      body: "{}",
    });
    expect(crossOrigin.status).toBe(401);
    expect(((await crossOrigin.json()) as { message: string }).message).toContain("console's own pages");
    // The same cookie and token from the console's origin: accepted and charged (then refused for the bad image).
    const accepted = await call({ "x-atelier-key-id": keys.first.id, "x-csrf-token": token! });
    expect(accepted).toMatchObject({ status: 422, body: { code: "IMAGE_UNDECODABLE" } });
    expect(await remaining(keys.bobs.id)).toBe(before.bobs);
    expect(await remaining(keys.first.id)).toBe(before.first - 1);
  });

  it("runs the page's curl command as printed: a multipart upload of the real photo, answered with the image", async () => {
    const { page } = member;
    await page.goto("/playground/upscale");
    await page.getByLabel("Image file").setInputFiles(photo);
    await page.locator("#imageUrl-preview img").waitFor();
    await page.getByLabel("Model").selectOption("lanczos");
    await page.getByLabel("Scale").fill("3");
    const command = (await page.locator("#playground-curl").textContent())!;
    expect(command).toContain(`-F 'image=@cat photo.png'`);
    expect(command).not.toMatch(/base64/);
    expect(command).toContain(`-o 'cat photo-upscaled-x3.png'`);
    await promisify(execFile)("bash", ["-c", command], { cwd: work, env: { ...process.env, ATELIER_API_KEY: keys.first.key, ATELIER_BASE_URL: service.url } });
    await expect(sharp(path.join(work, "cat photo-upscaled-x3.png")).metadata()).resolves.toMatchObject({ format: "png", width: photoSize.width * 3, height: photoSize.height * 3 });
  });

  it("builds the style picker from the installed styles, with thumbnails the service renders once and keeps", async () => {
    const { page } = member;
    await page.goto("/playground/style-transfer");
    const installed = (await (await fetch(`${service.url}/api/v1/models`)).json()) as { data: Array<{ id: string; task: string; installed: boolean; name: string }> };
    const styles = installed.data.filter((model) => model.task === "style-transfer" && model.installed);
    expect(styles.map((style) => style.id)).toEqual([STYLE]);
    await expect(page.getByLabel("Style", { exact: true }).locator("option").evaluateAll((options: unknown[]) => options.map((option) => (option as { value: string }).value))).resolves.toEqual([STYLE]);
    await expect(page.getByText(/more styles can be installed/).count()).resolves.toBe(1);
    const thumbnail = page.getByRole("button", { name: `Use the style ${styles[0]!.name}` }).locator("img");
    expect((await naturalSize(thumbnail))[0]).toBe(192);
    expect(fs.readdirSync(path.join(service.services.config.dataDir, "style-previews"))).toEqual([expect.stringMatching(new RegExp(`^${STYLE}-[0-9a-f]{16}\\.jpg$`))]);
    // A style that is not installed has no preview.
    expect((await page.request.get("/playground/styles/udnie.jpg")).status()).toBe(404);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
    expect(await horizontalOverflow(page)).toBe(0);
    await page.screenshot({ path: "/tmp/playground-style-phone.png", fullPage: true });
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
  });

  it("hides the generation options the chosen model does not take, and shows an error beside its field", async () => {
    const { page } = member;
    await page.goto("/playground/generate");
    await expect(page.getByLabel("Model").locator("option").allTextContents()).resolves.toEqual([expect.stringMatching(/^Automatic \(.*\)$/), expect.any(String)]);
    // The doodle model takes none of the tuning options.
    for (const label of ["Avoid", "Steps", "Follow the words", "Sampler"]) await expect(page.getByLabel(label, { exact: true }).isVisible()).resolves.toBe(false);
    await expect(page.getByLabel("Seed").isVisible()).resolves.toBe(true);
    await page.getByLabel("Prompt").fill("an owl");
    await page.getByLabel("Width").fill("13");
    await page.getByRole("button", { name: "Run" }).click();
    const error = page.locator("#field-width-error");
    await error.waitFor({ state: "visible", timeout: 30_000 });
    expect(await error.textContent()).toMatch(/width/i);
    await expect(page.getByLabel("Width").getAttribute("aria-invalid")).resolves.toBe("true");
    await page.screenshot({ path: "/tmp/playground-generate-error.png", fullPage: true });
    expect(member.problems).toEqual([]);
  });

  it("gives the improved prompt as text with Copy and Generate with this prompt, from the engine's presets", async () => {
    const { page } = member;
    await page.goto("/playground/prompt-improve");
    const styleOptions = await page.getByLabel("Style").locator("option").allTextContents();
    expect(styleOptions[0]).toBe("None");
    expect(styleOptions.length).toBeGreaterThan(3);
    await page.getByLabel("Idea").fill("a lighthouse at night");
    await page.getByLabel("Style").selectOption({ index: 1 });
    await page.getByLabel("Mood").selectOption({ index: 1 });
    await page.getByRole("button", { name: "Run" }).click();
    const prompt = page.locator(".playground-prompt").first();
    await prompt.waitFor({ timeout: 30_000 });
    const text = (await prompt.textContent())!;
    expect(text).toContain("lighthouse");
    await expect(page.getByRole("button", { name: "Copy prompt" }).count()).resolves.toBe(1);
    await page.screenshot({ path: "/tmp/playground-prompt.png", fullPage: true });
    await page.getByRole("link", { name: "Generate with this prompt" }).click();
    await page.waitForURL(/\/playground\/generate\?prompt=/);
    await expect(page.getByLabel("Prompt").inputValue()).resolves.toBe(text);
    expect(member.problems).toEqual([]);
  });
});
