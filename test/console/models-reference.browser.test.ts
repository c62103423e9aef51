/**
 * The Models and API reference pages in a real browser (Debian's Chromium): an admin installs a
 * model from the page (the real installer, from the model mirror) with a progress bar, the API
 * then runs it, and the admin removes it again; a member sees the catalog without the buttons and
 * is refused the actions. The API reference renders every operation of the served OpenAPI
 * document with Swagger UI under the console's strict CSP. Both pass an axe-core scan.
 */
import fs from "node:fs";
import type { Browser } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL_CATALOG } from "../../models/catalog/model-catalog.js";
import { hasMirrorModel, modelMirror } from "../support/test-assets.js";
import { makeTempDir } from "../support/temp-dir.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { describeViolations, signIn, watchProblems, type SignedInPage, WIDTHS } from "./signed-in-browser.js";
import { horizontalOverflow, launchChromium, screenshotWidths, seriousAxeViolations, skipWithoutChromium } from "./support/console-browser.js";

const PASSWORD = "correct horse battery staple";
const MODEL = "espcn-x3";
/** The keys of an OpenAPI path item that are operations (others: servers, parameters, summary). */
const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);
const skip = skipWithoutChromium("models-reference");
let service: TestService;
let browser: Browser;
let admin: SignedInPage;
let apiKey: string;
const modelsDir = makeTempDir("models");

beforeAll(async () => {
  if (skip) return;
  service = await startTestService({ ATELIER_MODELS_DIR: modelsDir, ATELIER_MODEL_MIRROR: modelMirror });
  await service.services.accounts.createUser({ email: "admin@example.com", displayName: "Ada Admin", password: PASSWORD, role: "admin" });
  await service.services.accounts.createUser({ email: "member@example.com", displayName: "Max Member", password: PASSWORD, role: "member" });
  apiKey = await service.createKey("models");
  browser = await launchChromium();
  admin = await signIn(browser, service.url, "admin@example.com", PASSWORD);
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
  fs.rmSync(modelsDir, { recursive: true, force: true });
});

async function apiModel(id: string): Promise<{ installed: boolean }> {
  const { data } = (await (await fetch(`${service.url}/api/v1/models`)).json()) as { data: Array<{ id: string; installed: boolean }> };
  return data.find((model) => model.id === id)!;
}

describe.skipIf(skip)("models page", () => {
  it("lists the whole catalog with installed state, licence and size", async () => {
    const { page } = admin;
    await page.goto("/models");
    const rows = page.locator("#models-table tbody tr");
    expect(await rows.count()).toBeGreaterThanOrEqual(MODEL_CATALOG.length);
    const lanczos = page.locator('tr[data-model-id="lanczos"]');
    await expect(lanczos.locator('[data-label="State"] .status').textContent()).resolves.toBe("installed");
    await expect(lanczos.locator('[data-label="Licence"]').textContent()).resolves.toMatch(/MIT/);
    const espcn = page.locator(`tr[data-model-id="${MODEL}"]`);
    await expect(espcn.locator('[data-label="State"] .status').textContent()).resolves.toBe("not installed");
    await expect(espcn.locator('[data-label="Size"]').textContent()).resolves.toMatch(/^0\.\d MB$/);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
  });

  it.skipIf(!hasMirrorModel("superres-espcn-x3"))("installs a model with a progress bar, after which the API runs it, then removes it", async () => {
    const { page } = admin;
    await page.goto("/models");
    const row = page.locator(`tr[data-model-id="${MODEL}"]`);
    await row.getByRole("button", { name: /^Install/ }).click();
    // The bar shows while the job runs; the page reloads with the new state when it ends.
    await row.locator("progress").waitFor({ state: "visible" });
    await expect(row.locator("progress").getAttribute("max")).resolves.toMatch(/^\d+$/);
    await page.locator(`tr[data-model-id="${MODEL}"] [data-label="State"] .status`, { hasText: /^installed$/ }).waitFor({ timeout: 30_000 });
    expect(await apiModel(MODEL)).toMatchObject({ installed: true });
    const small = await sharp({ create: { width: 24, height: 16, channels: 3, background: "#3366aa" } }).png().toBuffer();
    const upscale = await service.post("/tools/upscale", { imageUrl: `data:image/png;base64,${small.toString("base64")}`, scale: 3, model: MODEL }, apiKey);
    expect(upscale.status).toBe(200);
    expect(await upscale.json()).toMatchObject({ model: MODEL, data: [{ width: 72, height: 48 }] });
    await screenshotWidths(page, "console-models");
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });

    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator(`tr[data-model-id="${MODEL}"]`).getByRole("button", { name: /^Remove/ }).click();
    await page.locator(`tr[data-model-id="${MODEL}"] [data-label="State"] .status`, { hasText: /^not installed$/ }).waitFor({ timeout: 15_000 });
    expect(await apiModel(MODEL)).toMatchObject({ installed: false });
    expect(admin.problems).toEqual([]);
  });

  it("shows members the catalog without install buttons and refuses them the actions", async () => {
    const member = await signIn(browser, service.url, "member@example.com", PASSWORD);
    const { page } = member;
    await page.goto("/models");
    await expect(page.getByRole("button", { name: /^Install/ }).count()).resolves.toBe(0);
    await expect(page.locator(`tr[data-model-id="${MODEL}"]`).textContent()).resolves.toMatch(/An admin installs it/);
    const token = await page.locator('input[name="_csrf"]').first().getAttribute("value");
    const refused = await page.request.post(`/models/${MODEL}/install`, { form: { _csrf: token ?? "" }, headers: { origin: service.url, accept: "application/json" } });
    expect(refused.status()).toBe(403);
    expect((await page.request.get("/models/installs")).status()).toBe(403);
    await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
    expect(await horizontalOverflow(page)).toBe(0);
    await member.context.close();
  });
});

describe.skipIf(skip)("API reference page", () => {
  it("renders every operation of the served OpenAPI document, signed out too, under the strict CSP", async () => {
    const document = (await (await fetch(`${service.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const expected = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.keys(item).filter((key) => HTTP_METHODS.has(key)).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(expected.length).toBeGreaterThanOrEqual(6);
    const context = await browser.newContext({ baseURL: service.url, viewport: { width: WIDTHS.desktop, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    watchProblems(page, problems);
    const response = await page.goto("/reference");
    expect(response!.headers()["content-security-policy"]).toMatch(/script-src 'self'/);
    await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
    const rendered = await page.locator(".opblock").evaluateAll((blocks) =>
      blocks.map((block) => `${block.querySelector(".opblock-summary-method")!.textContent!.trim()} ${block.querySelector(".opblock-summary-path")!.getAttribute("data-path")}`),
    );
    expect(rendered.sort()).toEqual(expected);
    expect(problems).toEqual([]);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);
    await context.close();
  });

  it("is linked from every console page and shows an operation's request schema", async () => {
    const { page } = admin;
    for (const path of ["/keys", "/usage", "/playground", "/models"]) {
      await page.goto(path);
      await expect(page.getByRole("link", { name: "API reference" }).first().getAttribute("href")).resolves.toBe("/reference");
    }
    await page.getByRole("link", { name: "API reference" }).first().click();
    await page.waitForURL(/\/reference$/);
    await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
    await screenshotWidths(page, "console-api-reference");
    await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
    expect(await horizontalOverflow(page)).toBe(0);
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    await page.locator(".opblock-summary", { hasText: "/v1/tools/upscale" }).click();
    await page.locator(".opblock-body").getByText("imageUrl").first().waitFor();
    expect(admin.problems).toEqual([]);
  });
});
