/**
 * The first hour of a newcomer, end to end through real parts: `npm start`'s composition root in a
 * process of its own on a fresh data folder, installing its starter models from the mirror as a
 * first start does; the one-time setup link read from its output and opened in Chromium to create
 * the first administrator (after which the link is done); an API key made on the keys page, its
 * secret shown once; every playground operation run with the session, the new key picked in the
 * key picker and the models, style and background picked from the pickers, on real photographs,
 * each showing a real result and charged to that key on the Usage page; last, the page's "same
 * call with curl" written to a script and run by bash and the real curl on a photo of over 300 KB.
 * The single pieces are tested on their own (first-admin.browser.test.ts, console-keys,
 * playground-session, playground-usage); this walks them in a row, as a person would.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { Browser, Locator, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mainProcessEnv, startMainProcess, type MainProcess } from "../support/main-process.js";
import { hasTestPhotos, modelMirror, testPhoto } from "../support/test-assets.js";
import { bytesOfDataUrl } from "../support/test-images.js";
import { makeTempDir } from "../support/temp-dir.js";
import { STARTER_MODELS } from "../../models/catalog/starter-models.js";
import { watchProblems } from "./signed-in-browser.js";
import { launchChromium, naturalSize } from "./support/console-browser.js";

const ADMIN = { email: "newcomer@example.com", name: "New Comer", password: "a passphrase for the first hour" };
const KEY_NAME = "first hour";
const SETUP_LINE = /^ {2}Setup: +no account exists yet: open (\S+) to create the first administrator$/;
const KEY_SHAPE = /^atl_[A-Za-z0-9_-]+$/;

const dataDir = makeTempDir("test");
const work = makeTempDir("first-hour");
/** Small real photos for the playground (the steps wait on real models), and one of over 300 KB for curl. */
const photos = { cat: path.join(work, "cat.png"), person: path.join(work, "astronaut.png"), large: path.join(work, "coffee mug.png") };
let service: MainProcess;
let browser: Browser;
let page: Page;
const problems: string[] = [];
/** From the steps before: the key's id (the picker's value) and its secret (read once from the page). */
const key = { id: "", secret: "" };

/** Polls `check` until it answers something other than undefined; fails after `waitMs` with what `describe` says. */
async function eventually<T>(check: () => Promise<T | undefined>, describe: () => string, waitMs = 60_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(describe());
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

interface Readiness {
  checks: Array<{ name: string; info?: { state: string; models: Array<{ id: string; state: string }> } }>;
}

beforeAll(async () => {
  // Nothing here is optional: without the mirror or the photographs the walk fails, saying what is missing.
  if (!fs.existsSync(modelMirror)) throw new Error(`No model mirror at ${modelMirror}: set ATELIER_MODEL_MIRROR to the mirror of shared/models.`);
  if (!hasTestPhotos()) throw new Error("The test photographs are missing: run scripts/fetch-test-photos.sh.");
  await sharp(testPhoto("chelsea.png")).resize(180).png().toFile(photos.cat);
  await sharp(testPhoto("astronaut.png")).resize(192).png().toFile(photos.person);
  fs.copyFileSync(testPhoto("coffee.png"), photos.large);
  // `npm start` on a fresh folder: a free port, the starter models installed from the mirror in the background.
  service = await startMainProcess(mainProcessEnv(dataDir, { ATELIER_PROVISION_MODELS: "true", ATELIER_MODEL_MIRROR: modelMirror }));
  browser = await launchChromium();
  page = await (await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 900 }, acceptDownloads: true })).newPage();
  watchProblems(page, problems);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (service && service.child.exitCode === null) {
    service.child.kill("SIGTERM");
    await service.exited;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

/** Chooses the new key in the playground's key picker, by the name it was given. */
async function pickKey(): Promise<void> {
  const picker = page.getByLabel("Charge to");
  const label = (await picker.locator("option", { hasText: KEY_NAME }).textContent())!;
  await picker.selectOption({ label });
  expect(await picker.inputValue()).toBe(key.id);
  await expect(page.getByLabel("API key").isVisible()).resolves.toBe(false);
}

async function choosePhoto(file: string): Promise<void> {
  await page.getByLabel("Image file").setInputFiles(file);
  await page.locator("#imageUrl-preview img").waitFor();
}

/** Presses Run and waits for the end; the status must say it is done (else it shows the page's error). */
async function run(): Promise<void> {
  await page.getByRole("button", { name: "Run" }).click();
  const status = page.getByRole("status").filter({ hasText: /Done in|Failed|failed/ });
  await status.waitFor({ timeout: 120_000 });
  const text = (await status.textContent())!;
  const error = (await page.locator(".playground-error").allTextContents()).join(" ");
  expect(`${text} ${error}`.trim()).toMatch(/^Done in [\d.]+ s \(job .+, request .+\)\./);
}

/** The bytes of a result image as the page shows it (a data URL, or a session-served link). */
async function imageBytes(image: Locator): Promise<Buffer> {
  const source = (await image.getAttribute("src"))!;
  if (source.startsWith("data:")) return bytesOfDataUrl(source);
  return Buffer.from(await (await page.request.get(source)).body());
}

async function sizeOf(file: string): Promise<[number, number]> {
  const meta = await sharp(file).metadata();
  return [meta.width!, meta.height!];
}

// Generous: each step waits on real models, on two cores shared with other test files.
describe("the first hour, from `npm start` on a fresh folder", { timeout: 180_000 }, () => {
  it("prints a setup link that creates the first administrator and signs them in, once", async () => {
    // The banner is one write, so its setup line has arrived with the address.
    const link = service.output.map((line) => SETUP_LINE.exec(line)?.[1]).find((found) => found !== undefined);
    expect(link, service.output.join("\n")).toBeDefined();
    expect(new URL(link!).origin).toBe(service.url);

    await page.goto(link!);
    await page.getByRole("heading", { level: 1, name: "Create the first administrator" }).waitFor();
    await page.getByLabel("Email").fill(ADMIN.email);
    await page.getByLabel("Display name").fill(ADMIN.name);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Create administrator" }).click();
    await page.waitForURL(`${service.url}/keys`);
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    expect(await page.locator(".site-account").innerText()).toContain(ADMIN.name);

    // The link is spent: another browser holding it is told setup is done, and no second admin can be made.
    const late = await browser.newContext();
    const latePage = await late.newPage();
    expect((await latePage.goto(link!))?.status()).toBe(410);
    await latePage.getByRole("heading", { level: 1, name: "Setup is done" }).waitFor();
    await late.close();
  });

  it("creates an API key whose secret is shown once", async () => {
    await page.getByText("Create key", { exact: true }).click();
    await page.getByLabel("Name", { exact: true }).fill(KEY_NAME);
    await page.getByRole("button", { name: "Create", exact: true }).click();
    key.secret = await page.getByLabel("Your new API key").inputValue();
    expect(key.secret).toMatch(KEY_SHAPE);
    // Never again: not when the page is reloaded (which says so and creates nothing), nor on the keys page or the key's own page.
    expect(page.url()).toMatch(/\/keys\/[^/]+\/created$/);
    await page.reload();
    await page.getByRole("heading", { name: "The key’s secret is no longer shown" }).waitFor();
    expect(await page.content()).not.toContain(key.secret);
    await page.goto("/keys");
    expect(await page.content()).not.toContain(key.secret);
    const detail = page.getByRole("link", { name: KEY_NAME });
    await detail.click();
    await page.waitForURL(/\/keys\/[^/]+$/);
    key.id = new URL(page.url()).pathname.split("/").pop()!;
    expect(await page.content()).not.toContain(key.secret);
  });

  it("has the starter models installed from the mirror in the background", async () => {
    const provisioning = await eventually(
      async () => {
        const answer = (await (await fetch(`${service.url}/readyz`)).json()) as Readiness;
        const info = answer.checks.find((check) => check.name === "provisioning")?.info;
        return info?.state === "done" ? info : undefined;
      },
      () => `provisioning did not finish:\n${service.output.join("\n")}`,
    );
    expect(provisioning.models.map((model) => [model.id, model.state])).toEqual(STARTER_MODELS.map((id) => [id, "installed"]));
  });

  it("draws a picture from words with the model picked in the picker", async () => {
    await page.goto("/playground/generate");
    await pickKey();
    await page.getByLabel("Model").selectOption({ label: "Quick, Draw! doodles (conditional VAE)" });
    await page.getByLabel("Prompt").fill("an owl in the moonlight");
    await run();
    const image = page.locator("#playground-result figure img");
    const [width, height] = await naturalSize(image);
    expect(width).toBeGreaterThanOrEqual(64);
    expect(await page.locator("#playground-result .playground-size").textContent()).toBe(`${width} × ${height} px`);
    expect((await sharp(await imageBytes(image)).stats()).channels[0]!.stdev).toBeGreaterThan(0);
  });

  it("enlarges a photo with the upscaler picked in the picker, shown before and after", async () => {
    await page.goto("/playground/upscale");
    await pickKey();
    await choosePhoto(photos.cat);
    await page.getByLabel("Model").selectOption({ label: "4x LSDIR Compact C3" });
    await run();
    const [width, height] = await sizeOf(photos.cat);
    await expect(naturalSize(page.locator("#playground-result .playground-compare-after"))).resolves.toEqual([width * 2, height * 2]);
  });

  it("repaints a photo in the style picked from the thumbnails", async () => {
    await page.goto("/playground/style-transfer");
    await pickKey();
    await choosePhoto(photos.cat);
    await page.getByRole("button", { name: "Use the style Roberto Matta" }).click();
    await expect(page.getByLabel("Style", { exact: true }).inputValue()).resolves.toBe("matta");
    await run();
    await expect(naturalSize(page.locator("#playground-result figure img"))).resolves.toEqual(await sizeOf(photos.cat));
  });

  it("puts a white background behind the person in a photo, the background picked in the picker", async () => {
    await page.goto("/playground/background-remove");
    await pickKey();
    await choosePhoto(photos.person);
    await page.getByLabel("Background").selectOption({ label: "White" });
    await run();
    const after = page.locator("#playground-result .playground-compare-after");
    await expect(naturalSize(after)).resolves.toEqual(await sizeOf(photos.person));
    // A corner of the photo is background, now white; the middle is the astronaut, not.
    const { data, info } = await sharp(await imageBytes(after)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    expect(pixel(info.width - 2, 1)).toEqual([255, 255, 255]);
    expect(pixel(info.width >> 1, info.height >> 1)).not.toEqual([255, 255, 255]);
  });

  it("improves a prompt with the style and mood picked from the presets, with the term lists installed after start", async () => {
    await page.goto("/playground/prompt-improve");
    await pickKey();
    await page.getByLabel("Idea").fill("a lighthouse at night");
    await page.getByLabel("Style").selectOption({ index: 1 });
    await page.getByLabel("Mood").selectOption({ index: 1 });
    await run();
    const prompt = (await page.locator(".playground-prompt").first().textContent())!;
    expect(prompt).toContain("lighthouse");
    expect(prompt.length).toBeGreaterThan("a lighthouse at night".length);
    // The worker started before provisioning brought the engine's term lists; the call found and indexed them.
    const engines = service.output.filter((line) => line.includes('"msg":"prompt engine ready"')).map((line) => (JSON.parse(line) as { modifierLists: string }).modifierLists);
    expect(engines).toEqual(["missing", "indexed"]);
  });

  it("charged every call to the picked key, as its Usage page shows", async () => {
    await page.goto("/usage");
    await page.getByLabel("Key").selectOption(key.id);
    await page.waitForURL(new RegExp(`key=${key.id}`));
    const rows = (await page.evaluate(`[...document.querySelectorAll("tr")].filter((row) => row.querySelector("th[data-label=Operation]")).map((row) => [
      row.querySelector("th").textContent.trim(), row.querySelector("td[data-label=Requests]").textContent.trim(), row.querySelector("td[data-label='By status']").textContent.trim(),
    ])`)) as string[][];
    expect(rows.sort()).toEqual(
      ["generate", "prompt/improve", "tools/background-remove", "tools/style-transfer", "tools/upscale"].map((operation) => [operation, "1", "200: 1"]),
    );
  });

  it("runs the page's curl command as printed, on a photo of over 300 KB, and gets the image", async () => {
    expect(fs.statSync(photos.large).size).toBeGreaterThan(300_000);
    await page.goto("/playground/upscale");
    await choosePhoto(photos.large);
    // The classical enlarger: this step is about the upload, not the network (the page's run above used one).
    await page.getByLabel("Model").selectOption("lanczos");
    const command = (await page.locator("#playground-curl").textContent())!;
    const script = path.join(work, "same-call.sh");
    fs.writeFileSync(script, `${command}\n`);
    await promisify(execFile)("bash", [script], { cwd: work, env: { ...process.env, ATELIER_API_KEY: key.secret, ATELIER_BASE_URL: service.url } });
    const saved = path.join(work, "coffee mug-upscaled-x2.png");
    expect(fs.readFileSync(saved).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const [width, height] = await sizeOf(photos.large);
    await expect(sizeOf(saved)).resolves.toEqual([width * 2, height * 2]);
    expect(problems).toEqual([]);
  });
});
