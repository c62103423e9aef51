/**
 * The Playground and Usage pages in a real browser (Debian's Chromium): a member uploads a real
 * photo by picking it and by dropping it, runs an upscale with one of their keys, gets the image
 * back with its size and a download link, runs the page's own curl command successfully, and sees
 * the calls appear on the Usage page (charts, tables, CSV). Another member's key stays invisible;
 * an admin sees the whole service. Every page passes an axe-core scan and runs under the strict CSP.
 * The playground runs each call as a job: a tiled network upscale (espcn-x3 from the mirror) moves
 * the progress bar tile by tile to its end before the result shows, and Cancel stops a running job.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyIdOf } from "../../server/keys/api-key-format.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, hasTestPhotos, testPhoto } from "../support/test-assets.js";
import type { TestService } from "../support/test-service.js";
import { describeViolations, startBrowserConsole, type BrowserConsole, type SignedInPage, WIDTHS } from "./signed-in-browser.js";
import { horizontalOverflow, naturalSize, screenshotWidths, seriousAxeViolations, skipWithoutChromium } from "./support/console-browser.js";

const modelsFolder = fileTempDir("test-models");

const skip = skipWithoutChromium("playground-usage");
const TILED_MODEL = "espcn-x3";
const hasTiledModel = hasMirrorModel("superres-espcn-x3");
let atelier: BrowserConsole<"alice" | "bob" | "admin">;
let service: TestService;
let member: SignedInPage;
let memberKey: string;
let otherKey: string;
let photo: { file: string; width: number; height: number };
const work = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-playground-"));

beforeAll(async () => {
  if (skip) return;
  atelier = await startBrowserConsole(hasTiledModel ? { ATELIER_MODELS_DIR: await installModels(modelsFolder, [TILED_MODEL]) } : {}, ["alice", "bob", "admin"]);
  service = atelier.service;
  const { keys } = service.services;
  const { alice, bob } = atelier.users;
  memberKey = (await keys.create({ name: "playground", ownerId: alice.id, hourlyLimit: 50 })).key;
  otherKey = (await keys.create({ name: "bob's key", ownerId: bob.id })).key;
  // A real photo where the test photos are present; else a photo-like image made here.
  const file = path.join(work, "cat photo.png");
  if (hasTestPhotos()) await sharp(testPhoto("chelsea.png")).resize(160).png().toFile(file);
  else await sharp({ create: { width: 160, height: 120, channels: 3, background: "#8a6d3b" } }).png().toFile(file);
  const meta = await sharp(file).metadata();
  photo = { file, width: meta.width!, height: meta.height! };
  member = await atelier.signIn("alice");
}, 120_000);

afterAll(async () => {
  await atelier?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

describe.skipIf(skip)("playground", () => {
  it("lists every operation with a link", async () => {
    const { page } = member;
    await page.goto("/playground");
    for (const name of ["Upscale an image", "Generate an image from a text prompt", "Apply an artistic style to an image", "Remove or replace the background of an image", "Improve a prompt"]) {
      await expect(page.getByRole("link", { name }).first().isVisible()).resolves.toBe(true);
    }
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
  });

  it("upscales a picked photo with the member's key: image, size, download and a curl command that works", async () => {
    const { page } = member;
    await page.goto("/playground/upscale");
    // The form comes from the API's zod schema: bounds and the enum are the schema's.
    await expect(page.getByLabel("Scale").getAttribute("min")).resolves.toBe("2");
    await expect(page.getByLabel("Scale").getAttribute("max")).resolves.toBe("8");
    await expect(page.getByLabel("Output format").locator("option").allTextContents()).resolves.toEqual(["png", "jpeg", "webp"]);
    await pasteKey(page, memberKey);
    await page.getByLabel("Image file").setInputFiles(photo.file);
    await expect(page.locator("#imageUrl-preview").textContent()).resolves.toBeDefined();
    await page.getByLabel("Scale").fill("2");
    await page.getByLabel("Model").selectOption("lanczos");
    await page.getByRole("button", { name: "Run" }).click();
    const status = page.getByRole("status").filter({ hasText: /Done in|Failed/ });
    await status.waitFor({ timeout: 30_000 });
    expect(await status.textContent()).toMatch(/Done in [\d.]+ s \(job .+, request .+\)\. This key has 49 of 50 requests left this hour\./);
    // Lanczos has no tiles: the bar stays indeterminate until the job ends, then shows its end.
    await expect(page.locator("#playground-progress-bar").evaluate((bar: unknown) => (bar as { value: number }).value)).resolves.toBe(1);
    await expect(page.locator("#playground-progress-label").textContent()).resolves.toBe("Finished (100%)");

    const result = page.locator("#playground-result figure");
    await expect(naturalSize(page.locator("#playground-result figure img:not(.playground-compare-before)").first())).resolves.toEqual([photo.width * 2, photo.height * 2]);
    expect(await result.locator(".playground-size").textContent()).toBe(`${photo.width * 2} × ${photo.height * 2} px`);
    const [download] = await Promise.all([page.waitForEvent("download"), result.getByRole("link", { name: "Download PNG" }).click()]);
    const saved = path.join(work, download.suggestedFilename());
    await download.saveAs(saved);
    expect(download.suggestedFilename()).toBe("cat photo-upscaled-x2.png");
    await expect(sharp(saved).metadata()).resolves.toMatchObject({ width: photo.width * 2, height: photo.height * 2, format: "png" });

    // The page's curl command, run as printed (the file uploaded from the current folder), saves the same result.
    const command = (await page.locator("#playground-curl").textContent())!;
    expect(command).toContain(`"$ATELIER_BASE_URL/api/v1/tools/upscale"`);
    expect(command).toContain(`"Authorization: Bearer $ATELIER_API_KEY"`);
    expect(await page.locator("#playground-curl-hint").textContent()).toContain(`export ATELIER_BASE_URL=${service.url}`);
    expect(command).toContain("-F 'image=@cat photo.png'");
    expect(command).toContain("-o 'cat photo-upscaled-x2.png'");
    expect(command).not.toContain("outputFormat");
    // Asynchronously: the service answering curl runs in this process.
    fs.rmSync(saved);
    await promisify(execFile)("bash", ["-c", command], { cwd: work, env: { ...process.env, ATELIER_API_KEY: memberKey, ATELIER_BASE_URL: service.url } });
    await expect(sharp(path.join(work, "cat photo-upscaled-x2.png")).metadata()).resolves.toMatchObject({ width: photo.width * 2, height: photo.height * 2, format: "png" });

    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
    expect(await horizontalOverflow(page)).toBe(0);
    await screenshotWidths(page, "console-playground-upscale");
    expect(member.problems).toEqual([]);
  });

  it("takes a dropped image, shows the API's error for a bad key, and stays usable at 375 px", async () => {
    const { page } = member;
    await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
    await page.goto("/playground/background-remove");
    const bytes = fs.readFileSync(photo.file).toString("base64");
    // A real drop event carrying the file, as a drag from the desktop delivers it (strings: the
    // project compiles without DOM types, and this runs in the page).
    await page.evaluate(`(() => {
      const data = Uint8Array.from(atob(${JSON.stringify(bytes)}), (character) => character.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([data], "dropped.png", { type: "image/png" }));
      document.getElementById("imageUrl-drop").dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
    })()`);
    await page.locator("#imageUrl-preview").getByText(/dropped\.png/).waitFor();
    await pasteKey(page, `${memberKey.slice(0, -1)}${memberKey.endsWith("A") ? "B" : "A"}`);
    await page.getByRole("button", { name: "Run" }).click();
    await expect(page.getByRole("alert").textContent({ timeout: 15_000 })).resolves.toMatch(/^UNAUTHORIZED: /);
    expect(await horizontalOverflow(page)).toBe(0);
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
  });
});

describe.skipIf(skip)("usage", () => {
  it("shows the member's calls by operation and status, as charts, tables and CSV", async () => {
    // One more call straight over HTTP, and one from another member that must not show.
    expect((await service.post("/prompt/improve", { prompt: "a lighthouse" }, memberKey)).status).toBe(200);
    expect((await service.post("/prompt/improve", { prompt: "not alice's" }, otherKey)).status).toBe(200);
    expect((await service.post("/prompt/improve", { prompt: "" }, memberKey)).status).toBe(400);
    const { page } = member;
    await page.goto("/usage");
    const stats = page.locator(".stats");
    // Upscale from the page and from curl (200), the bad key (401, not counted: no key), prompt/improve (200 and 400).
    await expect(stats.getByText("Requests").locator("xpath=following-sibling::dd").textContent()).resolves.toBe("4");
    await expect(stats.getByText("Errors").locator("xpath=following-sibling::dd").textContent()).resolves.toBe("1 (25.0%)");
    const upscaleRow = page.getByRole("row", { name: /tools\/upscale/ });
    await expect(upscaleRow.getByRole("cell").first().textContent()).resolves.toBe("2");
    await expect(upscaleRow.textContent()).resolves.toMatch(/200: 2/);
    const promptRow = page.getByRole("row", { name: /prompt\/improve/ });
    await expect(promptRow.getByRole("cell").allTextContents()).resolves.toEqual(["2", "1", "50.0%", expect.stringMatching(/^\d+\.\d+$/), "200: 1, 400: 1"]);
    // chart.js drew all three charts.
    const charts = (await page.evaluate(`["usage-requests-chart", "usage-status-chart", "usage-compute-chart"].map((id) => {
      const chart = Chart.getChart(document.getElementById(id));
      return chart ? chart.data.datasets.reduce((sum, dataset) => sum + dataset.data.reduce((a, b) => a + b, 0), 0) : -1;
    })`)) as number[];
    expect(charts[0]).toBe(4);
    expect(charts[1]).toBe(4);
    expect(charts[2]).toBeGreaterThan(0);

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
    const csv = fs.readFileSync(await download.path(), "utf8").trim().split("\r\n");
    expect(csv[0]).toBe("hour_start_utc,key_id,key_name,operation,status,requests,compute_seconds");
    expect(csv.slice(1).map((line) => line.split(",").slice(1, 6).join(","))).toEqual([
      `${keyIdOf(memberKey)},playground,prompt/improve,200,1`,
      `${keyIdOf(memberKey)},playground,prompt/improve,400,1`,
      `${keyIdOf(memberKey)},playground,tools/upscale,200,2`,
    ]);

    await page.getByLabel("Period").selectOption("30d");
    await page.waitForURL(/window=30d/);
    await expect(stats.getByText("Requests").locator("xpath=following-sibling::dd").textContent()).resolves.toBe("4");
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    expect(member.problems).toEqual([]);
  });

  it("answers 404 for another member's key, page and CSV alike", async () => {
    const { page } = member;
    const response = await page.goto(`/usage?key=${keyIdOf(otherKey)}`);
    expect(response!.status()).toBe(404);
    const csv = await page.request.get(`/usage.csv?key=${keyIdOf(otherKey)}`);
    expect(csv.status()).toBe(404);
  });

  it("gives an admin the whole service: users, keys, top keys with owners, error rates", async () => {
    const admin = await atelier.signIn("admin");
    const { page } = admin;
    await page.goto("/usage");
    const stat = (name: string) => page.locator(".stats").getByText(name, { exact: true }).locator("xpath=following-sibling::dd").textContent();
    await expect(stat("Requests")).resolves.toBe("5");
    await expect(stat("Users")).resolves.toBe("3");
    await expect(stat("Active keys")).resolves.toBe("2");
    const top = page.getByRole("table", { name: "Top keys" });
    await expect(top.getByRole("row").nth(1).textContent()).resolves.toMatch(/playground.*alice@example\.com\s*4\s*1\s*25\.0%/s);
    await expect(top.getByRole("row").nth(2).textContent()).resolves.toMatch(/bob's key.*bob@example\.com.*1/s);
    await page.getByLabel("User").selectOption({ label: "Bob (bob@example.com)" });
    await page.waitForURL(/user=/);
    await expect(stat("Requests")).resolves.toBe("1");
    await page.goto("/usage");
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    await screenshotWidths(page, "console-usage");
    expect(admin.problems).toEqual([]);
    await admin.context.close();
  });
});

/** Chooses to paste a key's secret (the page offers the member's keys by name first) and pastes `key`. */
async function pasteKey(page: SignedInPage["page"], key: string): Promise<void> {
  await page.getByLabel("Charge to").selectOption({ label: "Paste a key's secret instead" });
  await page.getByLabel("API key").fill(key);
}

/** Records every label and value the progress bar shows, from before the run starts. */
async function watchProgress(page: SignedInPage["page"]): Promise<void> {
  await page.evaluate(`(() => {
    const bar = document.getElementById("playground-progress-bar");
    const label = document.getElementById("playground-progress-label");
    window.seenProgress = [];
    const record = () => window.seenProgress.push({ label: label.textContent, value: bar.hasAttribute("value") ? bar.value : null });
    const observer = new MutationObserver(record);
    observer.observe(label, { childList: true, characterData: true, subtree: true });
    observer.observe(bar, { attributes: true });
  })()`);
}

async function seenProgress(page: SignedInPage["page"]): Promise<Array<{ label: string; value: number | null }>> {
  return (await page.evaluate("window.seenProgress")) as Array<{ label: string; value: number | null }>;
}

// After the usage tests, so these calls leave the counted ones above as they are.
describe.skipIf(skip || !hasTiledModel)("playground jobs with progress (espcn-x3)", () => {
  it("moves the progress bar tile by tile to its end, then shows the upscaled image", async () => {
    const { page } = member;
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    const file = path.join(work, "tiles.png");
    await sharp({ create: { width: 420, height: 300, channels: 3, background: "#3b6d8a" } }).png().toFile(file);
    await page.goto("/playground/upscale");
    await pasteKey(page, memberKey);
    await page.getByLabel("Image file").setInputFiles(file);
    await page.locator("#imageUrl-preview img").waitFor();
    await page.getByLabel("Scale").fill("3");
    await page.getByLabel("Model").selectOption(TILED_MODEL);
    await watchProgress(page);
    await page.getByRole("button", { name: "Run" }).click();
    const status = page.getByRole("status").filter({ hasText: /Done in|Failed/ });
    await status.waitFor({ timeout: 60_000 });
    expect(await status.textContent()).toMatch(/^Done in [\d.]+ s \(job .+, request .+\)\./);

    const seen = await seenProgress(page);
    const tiles = seen.map((entry) => /^Tiles: (\d+) of (\d+) \(\d+%\)$/.exec(entry.label)).filter((match) => match !== null);
    expect(tiles.length).toBeGreaterThanOrEqual(2);
    const total = Number(tiles[0]![2]);
    expect(total).toBeGreaterThanOrEqual(4);
    const steps = tiles.map((match) => Number(match![1]));
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(seen.at(-1)).toEqual({ label: "Finished (100%)", value: 1 });
    await expect(page.getByRole("progressbar", { name: "Finished (100%)" }).evaluate((bar: unknown) => (bar as { value: number }).value)).resolves.toBe(1);

    await expect(naturalSize(page.locator("#playground-result figure img:not(.playground-compare-before)").first())).resolves.toEqual([420 * 3, 300 * 3]);
    expect(await page.locator("#playground-result .playground-size").textContent()).toBe("1260 × 900 px");
    // The curl command stays the synchronous call.
    expect(await page.locator("#playground-curl").textContent()).not.toContain("respond-async");
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    expect(member.problems).toEqual([]);
  });

  it("falls back to polling the job when the event stream fails", async () => {
    const { page } = member;
    const eventStreams = "**/api/v1/jobs/*/events";
    await page.route(eventStreams, (route) => route.abort("connectionfailed"));
    const polls: string[] = [];
    const onRequest = (request: { url(): string; method(): string }) => {
      if (request.method() === "GET" && /\/api\/v1\/jobs\/[^/]+$/.test(new URL(request.url()).pathname)) polls.push(request.url());
    };
    page.on("request", onRequest);
    try {
      await page.goto("/playground/upscale");
      await pasteKey(page, memberKey);
      await page.getByLabel("Image file").setInputFiles(photo.file);
      await page.locator("#imageUrl-preview img").waitFor();
      await page.getByLabel("Model").selectOption("lanczos");
      await page.getByRole("button", { name: "Run" }).click();
      const status = page.getByRole("status").filter({ hasText: /Done in|Failed|request failed/ });
      await status.waitFor({ timeout: 60_000 });
      expect(await status.textContent()).toMatch(/^Done in [\d.]+ s \(job .+, request .+\)\./);
      expect(polls.length).toBeGreaterThanOrEqual(1);
      await expect(naturalSize(page.locator("#playground-result figure img:not(.playground-compare-before)").first())).resolves.toEqual([photo.width * 2, photo.height * 2]);
    } finally {
      page.off("request", onRequest);
      await page.unroute(eventStreams);
    }
    expect(member.problems).toEqual([]);
  });

  it("cancels a running job with Cancel: the job ends canceled and no result shows", async () => {
    const { page } = member;
    // Many tiles, so the job is still running when Cancel is pressed.
    const file = path.join(work, "large.png");
    await sharp({ create: { width: 1200, height: 900, channels: 3, background: "#8a3b6d" } }).png().toFile(file);
    await page.goto("/playground/upscale");
    await pasteKey(page, memberKey);
    await page.getByLabel("Image file").setInputFiles(file);
    await page.locator("#imageUrl-preview img").waitFor();
    await page.getByLabel("Scale").fill("3");
    await page.getByLabel("Model").selectOption(TILED_MODEL);
    await page.getByRole("button", { name: "Run" }).click();
    const label = page.locator("#playground-progress-label");
    await label.filter({ hasText: /^(Tiles: \d+ of \d+|Finished|Failed)/ }).waitFor({ timeout: 60_000 });
    expect(`${await label.textContent()} / ${await page.getByRole("status").textContent()}`).toMatch(/^Tiles: \d+ of \d+/);
    await screenshotWidths(page, "console-playground-job-running");
    await page.getByRole("button", { name: "Cancel" }).click();
    const status = page.getByRole("status").filter({ hasText: /Canceled after|Done in|Failed/ });
    await status.waitFor({ timeout: 60_000 });
    const text = (await status.textContent())!;
    expect(text).toMatch(/^Canceled after [\d.]+ s \(job .+\)\.$/);
    await expect(page.locator("#playground-progress-label").textContent()).resolves.toBe("Canceled");
    await expect(page.locator("#playground-result figure").count()).resolves.toBe(0);
    const jobId = /\(job (.+)\)\.$/.exec(text)![1]!;
    const job = (await (await fetch(`${service.url}/api/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${memberKey}` } })).json()) as { status: string };
    expect(job.status).toBe("canceled");
    expect(member.problems).toEqual([]);
  }, 120_000);
});
