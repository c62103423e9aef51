/**
 * Every console page with realistic content, visited in a real Chromium: a fresh service (models from
 * the mirror), its first-administrator page while no account exists, then an admin and a member with
 * keys, an upscale and a background-removal job and their usage, and each page as the admin sees it
 * (the member's own keys page too, as `keys`), the sign-in and invite pages signed out. The screenshot script
 * (scripts/console-screenshots.ts) and the accessibility test (console-pages.browser.test.ts) both
 * walk it, each doing its own thing on every page.
 */
import type { Browser, Page } from "playwright-core";
import { SETUP_PATH } from "../../../console/server/first-admin-setup.js";
import { PLAYGROUND_OPERATIONS } from "../../../console/playground/playground-operations.js";
import { finishedJob, submitAsync } from "../../jobs/job-helpers.js";
import { installModels } from "../../support/installed-models.js";
import { makeTempDir, removeTempDir } from "../../support/make-temp-dir.js";
import { dataUrl, gradientPng } from "../../support/test-images.js";
import { startTestService } from "../../support/test-service.js";
import { signIn, WIDTHS } from "../signed-in-browser.js";

const PASSWORD = "correct horse battery staple";

/** Called on each page once it has loaded; `name` is unique per page, e.g. `keys`, `playground-upscale`. */
export type Visit = (page: Page, name: string) => Promise<void>;

export async function tourConsole(browser: Browser, visit: Visit): Promise<void> {
  // Removed here, not by the test file: the screenshot script walks the tour outside vitest.
  const modelsDir = makeTempDir("test-models");
  try {
    await tourOver(modelsDir, browser, visit);
  } finally {
    removeTempDir(modelsDir);
  }
}

async function tourOver(modelsDir: string, browser: Browser, visit: Visit): Promise<void> {
  await installModels(modelsDir, ["portrait-selfie", "mathura", "cvae-quickdraw"]);
  const service = await startTestService({ ATELIER_MODELS_DIR: modelsDir });
  const anonymous = await browser.newContext({ baseURL: service.url, viewport: { width: WIDTHS.desktop, height: 900 } });
  try {
    const open = async (page: Page, path: string, name: string) => {
      const response = await page.goto(path);
      if (!response || response.status() !== 200) throw new Error(`${path} answered ${response?.status()}`);
      await page.waitForLoadState("networkidle");
      await visit(page, name);
    };
    const signedOut = await anonymous.newPage();
    await open(signedOut, SETUP_PATH, "first-admin");

    const admin = await service.services.accounts.createUser({ email: "ada@example.com", displayName: "Ada Admin", password: PASSWORD, role: "admin" });
    const member = await service.services.accounts.createUser({ email: "max@example.com", displayName: "Max Member", password: PASSWORD, role: "member" });
    await service.services.keys.create({ name: "nightly batch (CLI)" });
    const adminKey = await service.services.keys.create({ name: "website backend", ownerId: admin.id });
    await service.services.keys.create({ name: "mobile app", ownerId: member.id });
    const photo = dataUrl(await gradientPng(320, 240));
    const upscale = await submitAsync(service, "/tools/upscale", { imageUrl: photo, scale: 2, model: "lanczos" }, adminKey.key);
    await submitAsync(service, "/tools/background-remove", { imageUrl: photo, model: "portrait-selfie", replacement: "white" }, adminKey.key);
    await finishedJob(service, adminKey.key, upscale.id);
    await service.post("/prompt/improve", { prompt: "a lighthouse at dusk" }, adminKey.key);

    for (const path of ["/sign-in", "/invite"]) await open(signedOut, path, path.slice(1));

    const { page, context } = await signIn(browser, service.url, admin.email, PASSWORD);
    try {
      await open(page, "/keys", "keys-admin");
      await page.getByText("Create key", { exact: true }).click();
      await visit(page, "keys-create-form");
      await page.getByLabel("Name", { exact: true }).fill("screenshots");
      await page.getByRole("button", { name: "Create", exact: true }).click();
      await page.getByLabel("Your new API key").waitFor();
      await visit(page, "key-created");
      await open(page, `/keys/${adminKey.record.id}`, "key-detail");
      await open(page, `/keys/${adminKey.record.id}/revoke`, "revoke-confirm");
      await open(page, "/account", "account");
      await open(page, "/users", "users");
      await open(page, `/users/${member.id}`, "user-detail");
      await open(page, "/jobs", "jobs");
      await open(page, `/jobs/${upscale.id}`, "job-detail");
      await open(page, "/usage", "usage");
      await open(page, "/models", "models");
      await open(page, "/playground", "playground");
      for (const operation of PLAYGROUND_OPERATIONS) await open(page, `/playground/${operation.slug}`, `playground-${operation.slug}`);
      await open(page, "/reference", "api-reference");
    } finally {
      await context.close();
    }
    const memberSession = await signIn(browser, service.url, member.email, PASSWORD);
    try {
      await open(memberSession.page, "/keys", "keys");
    } finally {
      await memberSession.context.close();
    }
  } finally {
    await anonymous.close();
    await service.close();
  }
}
