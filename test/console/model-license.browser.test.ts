/**
 * Models whose licence forbids commercial use, or whose weights came with no licence, install from
 * the Models page only once an admin accepts the licence: the page shows a required box naming it
 * beside Install (the browser does not send the form without it), and the server refuses an install
 * POST without the acceptance with a message naming the licence. A model under an open licence
 * installs with the button alone.
 */
import fs from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { modelMirror } from "../support/test-assets.js";
import { makeTempDir } from "../support/temp-dir.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { describeViolations, signIn, type SignedInPage } from "./signed-in-browser.js";
import { launchChromium, seriousAxeViolations } from "./support/console-browser.js";
import { postForm, signInHttp } from "./support/console-service.js";

const PASSWORD = "correct horse battery staple";
/** Non-commercial (lengstrom's weights). */
const NON_COMMERCIAL = "udnie";
/** Weights published without a licence. */
const UNLICENSED = "candy-lite";
let service: TestService;
let browser: Browser;
let admin: SignedInPage;
const modelsDir = makeTempDir("models");

beforeAll(async () => {
  service = await startTestService({ ATELIER_MODELS_DIR: modelsDir, ATELIER_MODEL_MIRROR: modelMirror });
  await service.services.accounts.createUser({ email: "admin@example.com", displayName: "Ada Admin", password: PASSWORD, role: "admin" });
  browser = await launchChromium();
  admin = await signIn(browser, service.url, "admin@example.com", PASSWORD);
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
  fs.rmSync(modelsDir, { recursive: true, force: true });
});

describe("accepting a model's licence before installing it", () => {
  it("asks for the acceptance on the page, naming the licence, and installs once it is given", async () => {
    const { page } = admin;
    await page.goto("/models");
    const row = page.locator(`tr[data-model-id="${UNLICENSED}"]`);
    const accept = row.getByRole("checkbox", { name: /I accept the licence/ });
    expect(await accept.getAttribute("required")).not.toBeNull();
    expect(await row.locator(".accept-license").innerText()).toContain(catalogEntry(UNLICENSED)!.license);
    expect(await row.locator(".accept-license").innerText()).toContain("published without a licence");
    const nonCommercial = await page.locator(`tr[data-model-id="${NON_COMMERCIAL}"] .accept-license`).innerText();
    expect(nonCommercial).toContain("its licence forbids commercial use");
    expect(nonCommercial).toContain(catalogEntry(NON_COMMERCIAL)!.license);
    // An openly licensed model has no box.
    expect(await page.locator('tr[data-model-id="espcn-x3"] .accept-license').count()).toBe(0);
    expect(describeViolations(await seriousAxeViolations(page))).toEqual([]);

    // Without the box the browser keeps the form: nothing starts.
    await row.getByRole("button", { name: /^Install/ }).click();
    expect(await accept.evaluate((input) => (input as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing)).toBe(true);
    expect(service.services.modelInstalls.job(UNLICENSED)).toBeUndefined();

    await accept.check();
    await row.getByRole("button", { name: /^Install/ }).click();
    await page.locator(`tr[data-model-id="${UNLICENSED}"] [data-label="State"] .status`, { hasText: /^installed$/ }).waitFor({ timeout: 60_000 });
    expect(service.services.modelInstalls.job(UNLICENSED)).toMatchObject({ state: "installed" });
  }, 90_000);

  it("refuses an install POST without the acceptance, naming the licence, and takes one with it", async () => {
    const session = await signInHttp(service.url, "admin@example.com", PASSWORD);
    const refused = await postForm(service.url, `/models/${NON_COMMERCIAL}/install`, session, {}, { accept: "application/json" });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { code: string; message: string };
    expect(body.code).toBe("INVALID_INPUT");
    expect(body.message).toContain(`${NON_COMMERCIAL} is installed only once its licence is accepted, because its licence forbids commercial use`);
    expect(body.message).toContain(catalogEntry(NON_COMMERCIAL)!.license);
    expect(service.services.modelInstalls.job(NON_COMMERCIAL)).toBeUndefined();

    const accepted = await postForm(service.url, `/models/${NON_COMMERCIAL}/install`, session, { acceptLicense: "yes" }, { accept: "application/json" });
    expect(accepted.status).toBe(202);
    expect(((await accepted.json()) as { job: { modelId: string } }).job.modelId).toBe(NON_COMMERCIAL);
    await expect.poll(() => service.services.modelInstalls.job(NON_COMMERCIAL)?.state, { timeout: 60_000 }).toBe("installed");
  }, 90_000);
});
